package main

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

// render is `askslack render < request.json`: the message (and modals) a
// request becomes, as JSON to paste into Slack's Block Kit Builder.
func render(args []string, in io.Reader, out io.Writer) error {
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
		return err
	}
	phase, ok := waterfall.ParsePhase(*phaseName)
	if !ok {
		return fmt.Errorf("render: unknown phase %q", *phaseName)
	}
	now := time.Now()
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			return fmt.Errorf("render: --now: %w", err)
		}
		now = t
	}
	var req waterfall.Request
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		return fmt.Errorf("render: reading the request from stdin: %w", err)
	}
	if req.CallID == "" {
		req.CallID = "render"
	}
	if req.Agent.ID == "" {
		req.Agent.ID = "agent"
	}
	if err := waterfall.Validate(&req); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	v := blocks.View{CallID: req.CallID, Request: &req, Phase: phase, Now: now}
	if t := req.Timeout(); t > 0 {
		v.Deadline = now.Add(t)
		if phase == waterfall.PhaseContinued {
			v.Deadline = now.Add(-time.Minute)
		}
	}
	switch phase {
	case waterfall.PhaseSettled, waterfall.PhaseQueued, waterfall.PhaseDelivered:
		s, err := sampleSettlement(&req, *answerJSON, now)
		if err != nil {
			return err
		}
		v.Settlement = s
	}
	msg := blocks.Render(v)
	modals := map[string]slack.ModalViewRequest{}
	if phase == waterfall.PhaseOpen || phase == waterfall.PhaseContinued {
		modals = blocks.Modals(v, msg, blocks.Meta{CallID: req.CallID})
	}

	problems := check(msg, modals)
	var doc any
	switch *part {
	case "":
		doc = map[string]any{
			"text":    msg.Text,
			"message": map[string]any{"blocks": msg.Blocks},
			"modals":  modals,
		}
	case "message":
		doc = map[string]any{"blocks": msg.Blocks}
	case "text":
		doc = msg.Text
	default:
		m, ok := modals[*part]
		if !ok {
			return fmt.Errorf("render: no part %q; have message, text%s", *part, names(modals))
		}
		doc = m
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
