package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// render is `askslack render < request.json`: the message (and modals) a
// request becomes, as JSON to paste into Slack's Block Kit Builder.
func render(args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var req waterfall.Request
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		return fmt.Errorf("reading the request from stdin: %w", err)
	}
	if req.CallID == "" {
		req.CallID = "render"
	}
	if req.Agent.ID == "" {
		req.Agent.ID = "agent"
	}
	if err := waterfall.Validate(&req); err != nil {
		return err
	}
	now := time.Now()
	v := blocks.View{CallID: req.CallID, Request: &req, Phase: blocks.PhaseOpen, Now: now}
	if t := req.Timeout(); t > 0 {
		v.Deadline = now.Add(t)
	}
	msg := blocks.Render(v)
	modals := map[string]slack.ModalViewRequest{}
	for qi := range req.Questions {
		modals[fmt.Sprintf("other/%d", qi)] = blocks.OtherModal(v, qi, blocks.Meta{CallID: req.CallID})
		if req.Questions[qi].PlanReview() {
			modals[fmt.Sprintf("decline/%d", qi)] = blocks.DeclineModal(v, qi, blocks.Meta{CallID: req.CallID})
		}
		if req.Questions[qi].Detail != "" {
			modals[fmt.Sprintf("detail/%d", qi)] = blocks.DetailModal(v, qi)
		}
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(map[string]any{
		"message": map[string]any{"text": msg.Text, "blocks": msg.Blocks},
		"modals":  modals,
	})
}
