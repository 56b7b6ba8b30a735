package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/blockcheck"
)

const renderPlan = `{"callId":"toolu_render","agent":{"id":"claude","sessionId":"s-1","principal":"alice@example.com","sourceTaskId":"t-1"},"timeoutMs":600000,
 "questions":[{"id":"plan","question":"Approve the migration plan?","detail":"## Steps\n- **Back up** the table\n- Run ` + "`migrate`" + `\n","header":"Plan",
   "options":[{"label":"Approve"},{"label":"Revise"}],"intent":{"kind":"plan-review","approve":"Approve"}}]}`

const renderBatch = `{"callId":"toolu_batch","agent":{"id":"claude"},
 "questions":[{"id":"db","question":"Which database? <!channel>","options":[{"label":"Postgres","description":"durable"},{"label":"SQLite","preview":"CREATE TABLE t(x);"}]},
   {"id":"files","question":"Which files?","multiSelect":true,"options":[{"label":"a.go"},{"label":"b.go"}]}]}`

// TestRenderCommand runs `askslack render` in-process: it prints the
// message and every modal the message opens, as JSON that passes the Block
// Kit limits checker, and --part prints one pasteable payload.
func TestRenderCommand(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		in         string
		wantErr    string
		wantModals []string
		wantText   string // in the whole output
	}{
		{name: "plan review", in: renderPlan, wantModals: []string{"decline-0"}, wantText: `askslack.decline`},
		{name: "batch", in: renderBatch, wantModals: []string{"other", "preview-0-1"}, wantText: `&lt;!channel&gt;`},
		{name: "continued", args: []string{"--phase", "continued"}, in: renderPlan, wantText: "Answers are still delivered"},
		{name: "settled", args: []string{"--phase", "settled", "--answer", `{"answers":[{"id":"plan","selected":[],"custom":"Smaller steps"}]}`},
			in: renderPlan, wantText: "Plan declined"},
		{name: "withdrawn", args: []string{"--phase", "aborted"}, in: renderBatch, wantText: "withdrew"},
		{name: "bad phase", args: []string{"--phase", "later"}, in: renderPlan, wantErr: "unknown phase"},
		{name: "invalid request", in: `{"questions":[]}`, wantErr: "EMPTY_QUESTIONS"},
		{name: "bad answer", args: []string{"--phase", "settled", "--answer", `{"answers":[{"id":"plan","selected":["Maybe"]}]}`},
			in: renderPlan, wantErr: "not an offered option"},
		{name: "not json", in: `{`, wantErr: "reading the request"},
		{name: "unknown part", args: []string{"--part", "nope"}, in: renderPlan, wantErr: "no part"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			args := append([]string{"--now", "2026-12-01T10:00:00Z"}, tt.args...)
			err := Run(args, strings.NewReader(tt.in), &out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v\n%s", err, out.String())
			}
			var doc struct {
				Text    string                           `json:"text"`
				Message struct{ Blocks json.RawMessage } `json:"message"`
				Modals  map[string]json.RawMessage       `json:"modals"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, out.String())
			}
			if err := blockcheck.Message(doc.Text, doc.Message.Blocks); err != nil {
				t.Errorf("message: %v", err)
			}
			for name, v := range doc.Modals {
				if err := blockcheck.View(v); err != nil {
					t.Errorf("modal %s: %v", name, err)
				}
			}
			for _, m := range tt.wantModals {
				if _, ok := doc.Modals[m]; !ok {
					t.Errorf("no modal %q in %v", m, keysOf(doc.Modals))
				}
			}
			if !strings.Contains(out.String(), tt.wantText) {
				t.Errorf("output lacks %q", tt.wantText)
			}
		})
	}
}

// TestRenderCommandParts: --part prints exactly what Block Kit Builder
// takes: {"blocks": […]} for the message, the view object for a modal.
func TestRenderCommandParts(t *testing.T) {
	var out bytes.Buffer
	if err := Run([]string{"--part", "message"}, strings.NewReader(renderBatch), &out); err != nil {
		t.Fatal(err)
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &msg); err != nil || len(msg) != 1 || msg["blocks"] == nil {
		t.Fatalf("--part message printed %s (%v)", out.String(), err)
	}
	out.Reset()
	if err := Run([]string{"--part", "other"}, strings.NewReader(renderBatch), &out); err != nil {
		t.Fatal(err)
	}
	if err := blockcheck.View(out.Bytes()); err != nil || !strings.Contains(out.String(), `"type": "modal"`) {
		t.Fatalf("--part other printed %s (%v)", out.String(), err)
	}
	out.Reset()
	if err := Run([]string{"--part", "text"}, strings.NewReader(renderBatch), &out); err != nil {
		t.Fatal(err)
	}
	var text string
	if err := json.Unmarshal(out.Bytes(), &text); err != nil || !strings.Contains(text, "asks 2 questions") {
		t.Fatalf("--part text printed %s (%v)", out.String(), err)
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
