// Package render is `askslack render`: the Slack message (and every modal
// it can open) a request becomes, as Block Kit JSON checked against Slack's
// limits, without a bot or Slack.
package render

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/blockcheck"
	"github.com/askslack/askslack/waterfall"
)

const renderUsage = `usage: askslack render [flags] < request.json

Prints the Slack message (and every modal it can open) for a request body of
POST /v1/asks, as JSON:

  {"text": "<notification text>", "message": {"blocks": [...]}, "modals": {"other-0": {...}, ...}}

"message" and each modal are what Slack's Block Kit Builder takes: paste one
of them (or use --part to print just one). Everything is checked against
Slack's limits; problems go to stderr and make the exit status 1.

flags:
`

// Run is `askslack render < request.json`: the message (and modals) a
// request becomes, as JSON to paste into Slack's Block Kit Builder.
func Run(args []string, in io.Reader, out io.Writer) error {
	f, err := parseRenderFlags(args)
	if err != nil {
		return err
	}
	req, err := readRenderRequest(in)
	if err != nil {
		return err
	}
	v, err := f.view(req)
	if err != nil {
		return err
	}
	msg := blocks.Render(v)
	modals := map[string]slack.ModalViewRequest{}
	if v.Phase == waterfall.PhaseOpen || v.Phase == waterfall.PhaseContinued {
		modals = blocks.Modals(v, msg, blocks.Meta{CallID: req.CallID})
	}
	problems := check(msg, modals)
	doc, err := renderPart(msg, modals, f.part)
	if err != nil {
		return err
	}
	b, err := blocks.BuilderJSON(doc)
	if err != nil {
		return err
	}
	if _, err := out.Write(append(b, '\n')); err != nil {
		return err
	}
	return problems
}

// renderFlags are `askslack render`'s flags, parsed.
type renderFlags struct {
	phase  waterfall.Phase
	part   string
	answer string
	now    time.Time
}

func parseRenderFlags(args []string) (*renderFlags, error) {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	phaseName := fs.String("phase", "open", "message state: open, continued, settled, queued, delivered, aborted or expired")
	part := fs.String("part", "", `print only this part: "message", "text", or a modal name such as "other-0"`)
	answerJSON := fs.String("answer", "", `answer shown by settled/queued/delivered, as {"answers":[…]} (default: each question's first option)`)
	nowFlag := fs.String("now", "", "render as of this RFC 3339 time (default: now), for reproducible output")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), renderUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f := &renderFlags{part: *part, answer: *answerJSON, now: time.Now()}
	var ok bool
	if f.phase, ok = waterfall.ParsePhase(*phaseName); !ok {
		return nil, fmt.Errorf("render: unknown phase %q", *phaseName)
	}
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			return nil, fmt.Errorf("render: --now: %w", err)
		}
		f.now = t
	}
	return f, nil
}

// readRenderRequest reads the request to render, filling in what a sample
// may leave out (call id, agent).
func readRenderRequest(in io.Reader) (*waterfall.Request, error) {
	var req waterfall.Request
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		return nil, fmt.Errorf("render: reading the request from stdin: %w", err)
	}
	if req.CallID == "" {
		req.CallID = "render"
	}
	if req.Agent.ID == "" {
		req.Agent.ID = "agent"
	}
	if err := waterfall.Validate(&req); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	return &req, nil
}

// view is what req's message shows in the flags' phase at their time.
func (f *renderFlags) view(req *waterfall.Request) (waterfall.View, error) {
	v := waterfall.View{CallID: req.CallID, Request: req, Phase: f.phase, Now: f.now}
	if t := req.Timeout(); t > 0 {
		v.Deadline = f.now.Add(t)
		if f.phase == waterfall.PhaseContinued {
			v.Deadline = f.now.Add(-time.Minute)
		}
	}
	switch f.phase {
	case waterfall.PhaseSettled, waterfall.PhaseQueued, waterfall.PhaseDelivered:
		s, err := sampleSettlement(req, f.answer, f.now)
		if err != nil {
			return v, err
		}
		v.Settlement = s
	}
	return v, nil
}

// renderPart picks what --part asks for; "" is everything.
func renderPart(msg blocks.Message, modals map[string]slack.ModalViewRequest, part string) (any, error) {
	switch part {
	case "":
		return map[string]any{
			"text":    msg.Text,
			"message": map[string]any{"blocks": msg.Blocks},
			"modals":  modals,
		}, nil
	case "message":
		return map[string]any{"blocks": msg.Blocks}, nil
	case "text":
		return msg.Text, nil
	}
	m, ok := modals[part]
	if !ok {
		return nil, fmt.Errorf("render: no part %q; have message, text%s", part, names(modals))
	}
	return m, nil
}

// check runs the Block Kit limits checker over everything printed.
func check(msg blocks.Message, modals map[string]slack.ModalViewRequest) error {
	var errs []error
	b, err := json.Marshal(msg.Blocks)
	if err != nil {
		return err
	}
	if err := blockcheck.Message(msg.Text, b); err != nil {
		errs = append(errs, fmt.Errorf("message: %w", err))
	}
	for _, name := range sortedKeys(modals) {
		b, err := json.Marshal(modals[name])
		if err != nil {
			return err
		}
		if err := blockcheck.View(b); err != nil {
			errs = append(errs, fmt.Errorf("modal %s: %w", name, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("render: Slack would reject this: %w", errors.Join(errs...))
	}
	return nil
}

// sampleSettlement is the answer an answered phase shows: the one given, or
// each question's first option (typed text for a question without options).
func sampleSettlement(req *waterfall.Request, answerJSON string, now time.Time) (*waterfall.Settlement, error) {
	s := &waterfall.Settlement{Respondent: waterfall.Respondent{
		UserID: "U0123ABCD", UserName: "someone", At: now, Surface: waterfall.SurfaceSlack,
	}}
	if answerJSON != "" {
		if err := json.Unmarshal([]byte(answerJSON), &s.Answer); err != nil {
			return nil, fmt.Errorf("render: --answer: %w", err)
		}
		if err := waterfall.ValidateAnswer(req.Questions, &s.Answer); err != nil {
			return nil, fmt.Errorf("render: --answer: %w", err)
		}
		return s, nil
	}
	for _, q := range req.Questions {
		it := waterfall.AnswerItem{ID: q.ID, Selected: []string{}}
		switch {
		case q.PlanReview():
			it.Selected = []string{q.Intent.Approve}
		case len(q.Options) > 0:
			it.Selected = []string{q.Options[0].Label}
		default:
			it.Custom = "(a typed answer)"
		}
		s.Answers = append(s.Answers, it)
	}
	return s, nil
}

func sortedKeys(m map[string]slack.ModalViewRequest) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func names(m map[string]slack.ModalViewRequest) string {
	keys := sortedKeys(m)
	if len(keys) == 0 {
		return ""
	}
	return ", " + strings.Join(keys, ", ")
}
