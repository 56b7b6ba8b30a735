package blocks

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

type goldenCase struct {
	name string
	v    waterfall.View
	// What the open message must hold: element types of the question's
	// controls in order, and modals it must open.
	controls []slack.MessageElementType
	modals   []string
	text     []string // substrings of the fallback text
}

func planQ(detail string, options ...string) waterfall.Question {
	return waterfall.Question{
		ID: "plan", Question: "Approve this plan?", Detail: detail, Options: opts(options...),
		Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: options[0]},
	}
}

func goldenCases() []goldenCase {
	timed := func(v waterfall.View) waterfall.View { v.Deadline = testDeadline; return v }
	phase := func(v waterfall.View, p waterfall.Phase, s *waterfall.Settlement) waterfall.View {
		v.Phase, v.Settlement = p, s
		return v
	}
	db := waterfall.Question{ID: "db", Header: "Database", Question: "Which database should the orders service use?",
		Detail: "Orders must survive a restart. See **ADR-12**.",
		Options: []waterfall.Option{
			{Label: "Postgres", Description: "Durable and familiar; needs a server."},
			{Label: "SQLite", Description: "Embedded, one file; one writer at a time."},
			{Label: "Redis", Description: "Fast; durability depends on configuration."},
		}}
	yesno := waterfall.Question{ID: "q1", Question: "Deploy to production now?", Options: opts("Yes", "No")}
	long := make([]waterfall.Option, 4)
	for i := range long {
		long[i] = waterfall.Option{Label: strings.Repeat(string(rune('A'+i)), 10) + " " + words(289), Description: words(200)}
	}
	multi := waterfall.Question{ID: "files", Header: "Files", Question: "Which files should I reformat?", MultiSelect: true,
		Options: []waterfall.Option{{Label: "main.go"}, {Label: "server.go", Description: "HTTP handlers"}, {Label: "store.go"}, {Label: "README.md"}}}
	prev := waterfall.Question{ID: "layout", Question: "Which page layout?", Options: []waterfall.Option{
		{Label: "Sidebar", Description: "Navigation on the left", Preview: "+------+-----------+\n| nav  | content   |\n|      |           |\n+------+-----------+"},
		{Label: "Top bar", Description: "Navigation on top", Preview: "+------------------+\n| nav nav nav      |\n+------------------+\n| content          |\n+------------------+"},
		{Label: "None", Description: "Content only"},
	}}
	manyPrev := waterfall.Question{ID: "snippet", Question: "Which snippet style?", Options: numbered(8, true)}
	for i := range manyPrev.Options {
		manyPrev.Options[i].Preview = "```go\n// style " + manyPrev.Options[i].Label + "\nfunc F() {}\n```"
	}
	batch4 := request(
		waterfall.Question{ID: "lang", Header: "Language", Question: "Which language for the CLI?", Options: opts("Go", "Rust", "Python")},
		waterfall.Question{ID: "ci", Header: "CI", Question: "Which CI checks must pass?", MultiSelect: true, Options: opts("lint", "unit", "e2e", "fuzz")},
		waterfall.Question{ID: "name", Question: "What should the binary be called?"},
		waterfall.Question{ID: "license", Question: "Which license?", Detail: "The company default is Apache-2.0.", Options: numbered(12, true)},
	)
	var big []waterfall.Question
	for i := range 20 {
		big = append(big, waterfall.Question{ID: "q" + strconv.Itoa(i), Header: "Part " + strconv.Itoa(i+1), Question: "Question " + strconv.Itoa(i+1) + ": " + words(120), Options: numbered(60, false), MultiSelect: i%2 == 1})
	}
	var big20 []waterfall.Question
	for i := range 20 {
		big20 = append(big20, waterfall.Question{ID: "q" + strconv.Itoa(i), Question: "Question " + strconv.Itoa(i+1) + "?", Options: numbered(3, false)})
	}
	nasty := waterfall.Question{ID: "nasty", Header: "🚨 <!channel> 🚨",
		Question: "Ping <!channel> and <!here> and <@U024BE7LH>? *bold* _it_ ~s~ `code` <https://evil.example|click me> 🎉🎉",
		Detail:   "Hello <!everyone> & <@U1>: [safe](https://example.com/a?b=1&c=2) <https://evil.example|trust me> 🙂",
		Options: []waterfall.Option{
			{Label: "<!channel> yes 👍", Description: "<@U024BE7LH> & <#C123> *x*"},
			{Label: "no 👎 <https://evil.example|x>"},
			{Label: "🤷"},
		}}
	plan := planQ(planMarkdown(1500), "Approve", "Revise", "Cancel")
	plan.Question = "Approve this plan to migrate the billing service?"
	plan.Header = "Plan review"
	plan20k := planQ(planMarkdown(20_000), "Yes, go ahead", "No")
	planHuge := planQ(strings.Repeat("<&> ", 10_000), "Approve", "Decline")
	planMany := planQ(planMarkdown(800), append([]string{"Approve"}, labelsOf(numbered(8, false))...)...)
	terminal := request(yesno) // an agent hook: asks in its terminal when the window closes
	terminal.Agent.SessionID = "s1"
	terminal.OnTimeout = waterfall.OnTimeoutTerminal
	attributed := request(yesno)
	attributed.Agent = waterfall.Agent{ID: "release-bot", Principal: "alice@example.com", SourceTaskID: "task-7f3a"}
	settledMulti := &waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "files", Selected: []string{"main.go", "README.md"}, Custom: "also the <!channel> docs\nplease"}}},
		Respondent: waterfall.Respondent{UserID: "U0ALICE", UserName: "alice", At: testNow.Add(3 * time.Minute), Surface: waterfall.SurfaceSlack}}
	settledYes := &waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q1", Selected: []string{"Yes"}}}},
		Respondent: waterfall.Respondent{UserID: "U0BOB", UserName: "bob", At: testNow.Add(time.Minute), Surface: waterfall.SurfaceSlack}}
	recalled := view(request(db))
	recalled.Request.Recall = []waterfall.Recall{{Question: "db", Selected: []string{"SQLite"}, By: "alice <!here>", At: testNow.Add(-50 * time.Hour)}}
	recalledBatch := view(request(batch4.Questions...)) // a request of its own: batch4 is shared
	recalledBatch.Request.Recall = []waterfall.Recall{{Question: "ci", Selected: []string{"lint", "unit"}, By: "bob", At: testNow.Add(-3 * time.Hour)},
		{Question: "lang", Selected: []string{"Cobol"}, By: "eve", At: testNow}} // no longer offered: not shown
	editable := request(waterfall.Question{ID: waterfall.PermissionQuestionID, Header: "Bash", Question: "claude wants to use Bash in svc. Allow it?",
		Detail: "```\nrm -rf build && make release\n```", Options: opts("Allow", "Always allow", "Deny")})
	editable.Permission = &waterfall.Permission{Tool: "Bash", Command: "rm -rf build && make release", Repo: "svc",
		Editable: []waterfall.EditableField{{Name: "command", Label: "Command", Value: "rm -rf build && make release", Multiline: true}}}
	editedAllow := &waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: waterfall.PermissionQuestionID, Selected: []string{"Allow"},
		Edited: map[string]string{"command": "rm -rf build/tmp && make release"}}}},
		Respondent: waterfall.Respondent{UserID: "U0BOB", UserName: "bob", At: testNow.Add(time.Minute), Surface: waterfall.SurfaceSlack}}
	approved := &waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "plan", Selected: []string{"Approve"}}}},
		Respondent: waterfall.Respondent{UserID: "U0BOB", UserName: "bob", At: testNow.Add(time.Minute), Surface: waterfall.SurfaceSlack}}
	declined := &waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "plan", Selected: []string{}, Custom: "Split step 2 into two PRs."}}},
		Respondent: waterfall.Respondent{UserName: "ci-bot", At: testNow.Add(time.Minute), Surface: waterfall.SurfaceAPI}}
	quorumApproved := &waterfall.Settlement{Answer: approved.Answer, Respondent: approved.Respondent,
		Approvers: []waterfall.Respondent{{UserID: "U0ALICE", UserName: "alice", At: testNow, Surface: waterfall.SurfaceSlack}, approved.Respondent}}
	votes := func(v waterfall.View, t waterfall.Votes) waterfall.View { v.Votes = t; return v }
	batchAns := &waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{
		{ID: "lang", Selected: []string{"Go"}}, {ID: "ci", Selected: []string{"lint", "unit"}}, {ID: "name", Selected: []string{}}, {ID: "license", Selected: []string{}, Custom: "MIT"}}},
		Respondent: waterfall.Respondent{UserID: "U0ALICE", UserName: "alice", At: testNow.Add(2 * time.Minute), Surface: waterfall.SurfaceSlack}}

	btn, radio, sel, multiSel, check := slack.METButton, slack.METRadioButtons, slack.MessageElementType(slack.OptTypeStatic), slack.MessageElementType(slack.MultiOptTypeStatic), slack.METCheckboxGroups
	return []goldenCase{
		{name: "single_buttons", v: timed(view(request(db))), controls: []slack.MessageElementType{btn, btn, btn, btn},
			modals: []string{"other-0"}, text: []string{"claude-code asks: Which database", "Postgres, SQLite, Redis"}},
		{name: "single_yes_no", v: view(request(yesno)), controls: []slack.MessageElementType{btn, btn, btn}, modals: []string{"other-0"}},
		{name: "single_radio_7", v: view(request(waterfall.Question{ID: "q", Question: "Pick a region", Options: numbered(7, true)})),
			controls: []slack.MessageElementType{radio, btn}},
		{name: "single_labels_300", v: view(request(waterfall.Question{ID: "q", Question: "Which approach?", Options: long})),
			controls: []slack.MessageElementType{radio, btn}, modals: []string{"other-0", "detail-0"}},
		{name: "single_select_25", v: view(request(waterfall.Question{ID: "q", Question: "Which of 25 services?", Options: numbered(25, true)})),
			controls: []slack.MessageElementType{sel, btn}, text: []string{"and 15 more"}},
		{name: "single_select_100", v: view(request(waterfall.Question{ID: "q", Question: "Which of 100 tests?", Options: numbered(100, true)})),
			controls: []slack.MessageElementType{sel, btn}},
		{name: "free_text", v: view(request(waterfall.Question{ID: "q", Question: "What should the release be called?", Detail: "Something short."})),
			controls: []slack.MessageElementType{btn}, modals: []string{"other-0"}},
		{name: "multi_checkboxes", v: timed(view(request(multi))), controls: []slack.MessageElementType{check, btn}, modals: []string{"other-0"},
			text: []string{"Choose any of: main.go"}},
		{name: "multi_menu_25", v: view(request(waterfall.Question{ID: "q", Question: "Which hosts?", MultiSelect: true, Options: numbered(25, false)})),
			controls: []slack.MessageElementType{multiSel, btn}},
		{name: "previews", v: view(request(prev)), controls: []slack.MessageElementType{btn, btn, btn, btn},
			modals: []string{"other-0", "preview-0-0", "preview-0-1"}},
		{name: "previews_menu", v: view(request(manyPrev)), controls: []slack.MessageElementType{radio, btn},
			modals: []string{"preview-0-0", "preview-0-7"}},
		{name: "batch_4", v: timed(view(batch4)), modals: []string{"other"}, text: []string{"asks 4 questions"}},
		{name: "batch_20_modal", v: view(request(big...)), modals: []string{"other"}},
		{name: "batch_20_message", v: view(request(big20...)), modals: []string{"other"}},
		{name: "plan_review", v: timed(view(request(plan))), controls: []slack.MessageElementType{btn, btn, btn, btn},
			modals: []string{"decline-0"}, text: []string{"review a plan"}},
		{name: "plan_review_20k", v: view(request(plan20k)), controls: []slack.MessageElementType{btn, btn, btn},
			modals: []string{"decline-0", "detail-0"}},
		{name: "plan_review_paged", v: view(request(planHuge)), modals: []string{"detail-0", "detail-0-page-1"}},
		{name: "plan_review_many_options", v: view(request(planMany)), controls: []slack.MessageElementType{btn, sel, btn}},
		{name: "emoji_channel", v: view(request(nasty)), modals: []string{"other-0"}},
		{name: "attribution", v: view(attributed), text: []string{"release-bot (for alice@example.com)"}},
		{name: "continued", v: phase(timed(view(request(multi))), waterfall.PhaseContinued, nil), controls: []slack.MessageElementType{check, btn},
			text: []string{"Still open"}},
		{name: "continued_unclaimed", v: phase(view(request(yesno)), waterfall.PhaseContinued, nil)},
		{name: "timed_terminal", v: timed(view(terminal)), controls: []slack.MessageElementType{btn, btn, btn}},
		{name: "continued_terminal", v: phase(timed(view(terminal)), waterfall.PhaseContinued, nil), controls: []slack.MessageElementType{btn, btn, btn}},
		{name: "answered", v: phase(view(request(yesno)), waterfall.PhaseSettled, settledYes), text: []string{"Answered by bob"}},
		{name: "answered_multi_custom", v: phase(view(request(multi)), waterfall.PhaseSettled, settledMulti)},
		{name: "answered_batch_skipped", v: phase(view(batch4), waterfall.PhaseSettled, batchAns)},
		{name: "answered_plan_approved", v: phase(view(request(plan)), waterfall.PhaseSettled, approved)},
		{name: "answered_plan_declined", v: phase(view(request(plan)), waterfall.PhaseSettled, declined)},
		{name: "late_queued", v: phase(view(request(yesno)), waterfall.PhaseQueued, settledYes), text: []string{"late"}},
		{name: "late_delivered", v: phase(view(request(yesno)), waterfall.PhaseDelivered, settledYes)},
		{name: "withdrawn", v: phase(view(batch4), waterfall.PhaseAborted, nil), text: []string{"Withdrawn"}},
		{name: "quorum_open_one_of_two", v: votes(view(request(plan)), waterfall.Votes{Need: 2, Approved: []waterfall.Respondent{approved.Respondent}}),
			controls: []slack.MessageElementType{btn, btn, btn, btn}, text: []string{"(1 of 2 approvals)"}},
		{name: "quorum_open_named", v: votes(timed(view(request(plan))), waterfall.Votes{Need: 3, Approvers: []string{"U0BOB", "S0OPS"}}),
			text: []string{"(0 of 3 approvals)"}},
		{name: "quorum_continued", v: votes(phase(timed(view(request(plan))), waterfall.PhaseContinued, nil),
			waterfall.Votes{Need: 3, Approved: []waterfall.Respondent{quorumApproved.Approvers[0], approved.Respondent}, Approvers: []string{"U0BOB", "U0CAROL"}})},
		{name: "quorum_approved", v: phase(view(request(plan)), waterfall.PhaseSettled, quorumApproved)},
		{name: "permission_editable", v: view(editable), controls: []slack.MessageElementType{btn, btn, btn, btn, btn},
			modals: []string{"edit", "other-0"}},
		{name: "answered_edited", v: phase(view(editable), waterfall.PhaseSettled, editedAllow), text: []string{"Allowed with changes by bob", "Allow with changes"}},
		{name: "recalled", v: recalled, controls: []slack.MessageElementType{btn, btn, btn, btn},
			text: []string{"Which database"}},
		{name: "recalled_batch", v: recalledBatch},
		{name: "expired", v: phase(view(request(yesno)), waterfall.PhaseExpired, nil)},
		{name: "expired_unknown", v: waterfall.View{CallID: "toolu_gone", Phase: waterfall.PhaseExpired}},
	}
}

func labelsOf(os []waterfall.Option) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.Label
	}
	return out
}

// TestRenderGolden renders every shape and compares it with
// testdata/golden/<case>/*.json (go test ./blocks -update rewrites them).
// Every file is also checked against Slack's limits.
func TestRenderGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			if c.v.Request != nil {
				if err := waterfall.Validate(c.v.Request); err != nil {
					t.Fatalf("invalid request: %v", err)
				}
			}
			m := Render(c.v)
			checkMessage(t, "message", m)
			files := map[string]any{"message": map[string]any{"text": m.Text, "blocks": m.Blocks}}
			var modals map[string]slack.ModalViewRequest
			if c.v.Request != nil {
				checkIDs(t, "message", c.v, m.Blocks)
				modals = Modals(c.v, m, testMeta)
			}
			for name, mv := range modals {
				checkView(t, name, mv)
				checkIDs(t, name, c.v, mv.Blocks.BlockSet)
				files[name] = mv
			}
			for _, want := range c.modals {
				if _, ok := modals[want]; !ok {
					t.Errorf("message opens no %s modal; it opens %v", want, keys(modals))
				}
			}
			if c.controls != nil {
				if got := controlTypes(c.v, m); !slices.Equal(got, c.controls) {
					t.Errorf("controls %v, want %v", got, c.controls)
				}
			}
			for _, s := range c.text {
				if !strings.Contains(m.Text, s) {
					t.Errorf("text %q lacks %q", m.Text, s)
				}
			}
			golden(t, filepath.Join("testdata", "golden", c.name), files)
		})
	}
}

// controlTypes lists the element types of question 0's control block.
func controlTypes(v waterfall.View, m Message) []slack.MessageElementType {
	var out []slack.MessageElementType
	for _, e := range Elements(m.Blocks) {
		if e.BlockID == blockID(v.CallID, 0) {
			out = append(out, e.Type)
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// golden compares files (name → value, written as <dir>/<name>.json) with
// the directory's contents, or rewrites the directory with -update.
func golden(t *testing.T, dir string, files map[string]any) {
	t.Helper()
	want := map[string][]byte{}
	for name, v := range files {
		b, err := BuilderJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("%s: invalid JSON", name)
		}
		want[name+".json"] = append(b, '\n')
	}
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v (run go test ./blocks -update)", err)
	}
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			t.Errorf("%s/%s is no longer rendered (run go test ./blocks -update)", dir, e.Name())
		}
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%v (run go test ./blocks -update)", err)
			continue
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s/%s differs from the rendering (run go test ./blocks -update and review the diff)", dir, name)
		}
	}
}
