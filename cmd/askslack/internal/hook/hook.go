// Package hook turns Claude Code's and Codex CLI's hook events into askslack
// requests and askslack answers into the decision JSON those agents read
// from a hook's stdout (https://docs.anthropic.com/en/docs/claude-code/hooks,
// https://developers.openai.com/codex/hooks; checked against the real CLIs
// in cmd/askslack/realagent_test.go). It is pure: no
// I/O, no clock; the `askslack hook` subcommand (package hookcmd) does the
// asking.
package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/askslack/askslack/waterfall"
)

// Agent is the agent whose hook runs us; its value is the agent id shown in
// Slack.
type Agent string

// The agents askslack hook speaks for.
const (
	Claude Agent = "claude-code"
	Codex  Agent = "codex"
)

// Hook event names this package handles.
const (
	EventPreToolUse        = "PreToolUse"
	EventPermissionRequest = "PermissionRequest"
	EventNotification      = "Notification"
)

// Tool names with their own treatment.
const (
	ToolAskUserQuestion = "AskUserQuestion"
	ToolExitPlanMode    = "ExitPlanMode"
)

// Input is a hook's JSON on stdin: the fields both agents send that askslack
// reads. ToolInput is kept raw so it can be echoed back unchanged.
type Input struct {
	SessionID             string            `json:"session_id"`
	TranscriptPath        string            `json:"transcript_path,omitempty"`
	Cwd                   string            `json:"cwd"`
	HookEventName         string            `json:"hook_event_name"`
	PermissionMode        string            `json:"permission_mode,omitempty"`
	ToolName              string            `json:"tool_name,omitempty"`
	ToolInput             json.RawMessage   `json:"tool_input,omitempty"`
	ToolUseID             string            `json:"tool_use_id,omitempty"`
	PermissionSuggestions []json.RawMessage `json:"permission_suggestions,omitempty"`
	ToolResponse          json.RawMessage   `json:"tool_response,omitempty"`
	NotificationType      string            `json:"notification_type,omitempty"`
	Title                 string            `json:"title,omitempty"`
	Message               string            `json:"message,omitempty"`
}

// ErrBadInput is wrapped by Parse and Build for input they cannot use.
var ErrBadInput = errors.New("bad hook input")

// Parse decodes a hook's stdin.
func Parse(data []byte) (*Input, error) {
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrBadInput, err)
	}
	if in.HookEventName == "" {
		return nil, fmt.Errorf("%w: no hook_event_name", ErrBadInput)
	}
	return &in, nil
}

// Kind says what a hook event asks of askslack.
type Kind int

// The kinds of Plan.
const (
	// Skip: nothing to ask; print nothing so the agent's own flow decides.
	Skip Kind = iota
	// Ask: post Request and turn its answer into a decision with Decide.
	Ask
	// Notice: post Notice as a button-less FYI and exit.
	Notice
	// Grant: allow at once (GrantOutput): a permission prompt for
	// askslack's own MCP tools, which ask a person and gate nothing.
	Grant
	// Late: hand the session's late answers to the model, if any are
	// waiting (PostToolUse, UserPromptSubmit, Stop; late.go).
	Late
	// Beside: ask Request in Slack beside the agent's own prompt, whose
	// answer goes in through the agent rather than the hook's output
	// (Codex's request_user_input, PreToolUse; codex_input.go).
	Beside
)

// Plan is what one hook event becomes.
type Plan struct {
	Kind    Kind
	Request *waterfall.Request // Kind Ask
	Notice  NoticeText         // Kind Notice
	Reason  string             // Kind Skip: why (for stderr)
	// Stable reports a callId derived from a unique tool_use_id, safe to
	// re-attach to; otherwise it is a hash of the tool and its input.
	Stable bool
	// Deferrable reports an event whose defer decision the agent honours
	// (PreToolUse).
	Deferrable bool

	agent  Agent
	in     *Input
	opts   Options
	decide func(p *Plan, s waterfall.Settlement) (any, error)
}

// Options are how the hook was set up, and the one piece of I/O Build may
// need.
type Options struct {
	// Defer: the hook runs headless with --defer. Claude's PreToolUse hook
	// then owns AskUserQuestion (only PreToolUse can defer); otherwise the
	// PermissionRequest hook does, which runs beside the terminal's own
	// picker instead of holding it back.
	Defer bool
	// ReadPlan reads a plan file for ExitPlanMode when its input carries
	// no plan text (nil: none is read). Only files under a .claude/plans
	// folder ending .md are asked for.
	ReadPlan func(path string) (string, error)
	// Transcript is the session's transcript (nil: not read), where
	// ExitPlanMode's plan file is named when its input names none.
	Transcript func() []byte
}

// NoticeText is an FYI for the channel: who it is from and what happened.
type NoticeText struct {
	Agent waterfall.Agent
	Text  string
}

// Build maps a hook event to a Plan. Errors (wrapping ErrBadInput) are
// events or inputs this agent's hook cannot handle.
func Build(agent Agent, in *Input, opts Options) (*Plan, error) {
	p := &Plan{agent: agent, in: in, opts: opts}
	var err error
	switch {
	case in.HookEventName == EventPreToolUse && agent == Claude:
		err = p.preToolUse()
	case in.HookEventName == EventPreToolUse && agent == Codex && in.ToolName == ToolRequestUserInput:
		err = p.codexQuestionsPlan()
	case in.HookEventName == EventPreToolUse && agent == Codex:
		p.Reason = fmt.Sprintf("PreToolUse on %s: askslack answers only request_user_input there", in.ToolName)
		return p, nil
	case in.HookEventName == EventPermissionRequest && OwnTool(in.ToolName):
		p.Kind = Grant
		return p, nil
	case in.HookEventName == EventPermissionRequest && agent == Claude:
		err = p.claudePermission()
	case in.HookEventName == EventPermissionRequest && agent == Codex:
		err = p.permission(codexPermission)
	case in.HookEventName == EventNotification && agent == Claude:
		p.notice()
	case LateEvent(in.HookEventName):
		p.Kind = Late
	default:
		return nil, fmt.Errorf("%w: %s hook event %q is not handled by askslack hook", ErrBadInput, agent, in.HookEventName)
	}
	if err != nil {
		return nil, err
	}
	if p.Request != nil {
		p.Request.CallID, p.Stable = CallID(agent, in)
		if err := waterfall.Validate(p.Request); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
		}
	}
	return p, nil
}

func (p *Plan) preToolUse() error {
	p.Deferrable = true
	switch {
	case p.in.ToolName != ToolAskUserQuestion:
		p.Reason = fmt.Sprintf("PreToolUse on %s: askslack answers only AskUserQuestion there", p.in.ToolName)
		return nil
	case !p.opts.Defer:
		// A waiting PreToolUse hook keeps the terminal's picker from
		// showing (Claude Code 2.1.332); the PermissionRequest hook asks
		// beside it. Settings printed before that still name this hook.
		p.Reason = "PreToolUse on AskUserQuestion: the PermissionRequest hook asks it, beside the terminal (print the settings again to drop this hook)"
		return nil
	}
	return p.questions()
}

func (p *Plan) claudePermission() error {
	switch p.in.ToolName {
	case ToolAskUserQuestion:
		if p.opts.Defer {
			// Headless with --defer, the PreToolUse hook owns it;
			// answering here too would post the questions twice.
			p.Reason = "PermissionRequest on AskUserQuestion: with --defer the PreToolUse hook answers it"
			return nil
		}
		return p.questions()
	case ToolExitPlanMode:
		return p.plan()
	}
	return p.permission(claudePermission)
}

// agentOf is the request's agent: the agent id, the session (late answers
// go there) and, as the source task, the working directory's base name and
// the session's first characters, so a person knows which agent asks.
func agentOf(agent Agent, in *Input) waterfall.Agent {
	a := waterfall.Agent{ID: string(agent), SessionID: in.SessionID}
	if !waterfall.ValidID(a.SessionID) {
		a.SessionID = "hook-" + digest(in.SessionID)[:24]
	}
	var src []string
	if b := cwdBase(in.Cwd); b != "" {
		src = append(src, b)
	}
	if s := shortSession(in.SessionID); s != "" {
		src = append(src, s)
	}
	a.SourceTaskID = strings.Join(src, " · ")
	return a
}

func cwdBase(cwd string) string {
	if strings.TrimSpace(cwd) == "" {
		return ""
	}
	return filepath.Base(filepath.Clean(cwd))
}

// shortSession is the session id's first 8 characters (what a person
// matches against the terminal), or all of it when shorter.
func shortSession(id string) string {
	r := []rune(strings.TrimSpace(id))
	return string(r[:min(len(r), 8)])
}

// CallID derives the ask's callId from the hook input, so that the hook run
// again for the same tool call (a resumed headless session) re-attaches to
// the same question: from session and tool_use_id when there is one
// (stable: unique per call), else from session, tool name and input.
func CallID(agent Agent, in *Input) (string, bool) {
	prefix := map[Agent]string{Claude: "claude-", Codex: "codex-"}[agent]
	if in.ToolUseID != "" {
		return prefix + digest(in.SessionID, in.ToolUseID)[:32], true
	}
	var input bytes.Buffer
	if json.Compact(&input, in.ToolInput) != nil {
		input.Reset()
		input.Write(in.ToolInput)
	}
	return prefix + digest(in.SessionID, in.HookEventName, in.ToolName, input.String())[:32], false
}

func digest(parts ...string) string {
	h := sha256.New()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// maxNotice keeps a notice under the host API's 3000-character cap.
const maxNotice = 2900

func (p *Plan) notice() {
	p.Kind = Notice
	in := p.in
	what := strings.TrimSpace(in.Message)
	if t := strings.TrimSpace(in.Title); t != "" && what != "" {
		what = t + ": " + what
	} else if what == "" {
		what = t
	}
	if what == "" {
		what = "The agent is waiting for you in the terminal."
	}
	p.Notice = NoticeText{Agent: agentOf(p.agent, in), Text: truncate(what, maxNotice)}
}
