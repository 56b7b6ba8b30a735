// Package mcpserver is `askslack mcp`: a stdio MCP server a coding agent
// launches, whose ask_user_question and get_late_answers tools ask the
// team in Slack through the bot's host API.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

// mcpQuestion is one question in the AskUserQuestion shape coding agents
// already use.
type mcpQuestion struct {
	Question    string      `json:"question"`
	Header      string      `json:"header"`
	Options     []mcpOption `json:"options"`
	MultiSelect bool        `json:"multiSelect"`
}

type mcpOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	Preview     string `json:"preview,omitempty"`
}

type askInput struct {
	Questions   []mcpQuestion `json:"questions"`
	WaitSeconds *float64      `json:"waitSeconds,omitempty"`
}

// askOutput is the structured result of ask_user_question.
type askOutput struct {
	CallID     string                 `json:"callId"`
	Pending    bool                   `json:"pending"`
	Answers    []waterfall.AnswerItem `json:"answers,omitempty"`
	Respondent *waterfall.Respondent  `json:"respondent,omitempty"`
	// Questions maps the answers' ids ("q0"…) back to the questions asked.
	Questions map[string]string `json:"questions,omitempty"`
	// Message is what the model must read, in the structured result too:
	// both Claude Code and Codex hand the model a tool's structured
	// content when it has one, not its text (2.1.332, 0.171.0). Pending:
	// that nothing may be assumed and how the answer will come; answered:
	// the answer with whatever a person typed fenced as untrusted data.
	Message string `json:"message"`
}

type lateInput struct {
	WaitSeconds *float64 `json:"waitSeconds,omitempty"`
}

type lateOutput struct {
	Messages []waterfall.SteeredMessage `json:"messages"`
}

// askSchema is ask_user_question's input schema: the AskUserQuestion shape
// (1–4 questions, header ≤12 characters, 2–4 options, "Other" implied) plus
// an optional wait.
const askSchema = `{
  "type": "object",
  "required": ["questions"],
  "additionalProperties": false,
  "properties": {
    "questions": {
      "type": "array", "minItems": 1, "maxItems": 4,
      "description": "Questions to ask the user (1-4). Each person can also type their own answer (\"Other\").",
      "items": {
        "type": "object",
        "required": ["question", "header", "options", "multiSelect"],
        "additionalProperties": false,
        "properties": {
          "question": {"type": "string", "description": "The complete question, ending with a question mark."},
          "header": {"type": "string", "maxLength": 12, "description": "A very short label shown as a chip (max 12 chars), e.g. \"Auth method\"."},
          "multiSelect": {"type": "boolean", "description": "Allow choosing several options."},
          "options": {
            "type": "array", "minItems": 2, "maxItems": 4,
            "items": {
              "type": "object",
              "required": ["label", "description"],
              "additionalProperties": false,
              "properties": {
                "label": {"type": "string", "description": "The choice shown to the user (1-5 words)."},
                "description": {"type": "string", "description": "What this option means or its trade-off."},
                "preview": {"type": "string", "description": "Optional preview content (code, mockup) the user can open."}
              }
            }
          }
        }
      }
    },
    "waitSeconds": {"type": "number", "exclusiveMinimum": 0, "maximum": 86400,
      "description": "How long to wait for an answer before continuing without one (default set by the server). The question stays open in Slack afterwards; a late answer arrives through get_late_answers."}
  }
}`

const lateSchema = `{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "waitSeconds": {"type": "number", "minimum": 0, "maximum": 300, "description": "Wait up to this long for a late answer to arrive (default 0: return at once)."}
  }
}`

func mustSchema(s string) *jsonschema.Schema {
	var sc jsonschema.Schema
	if err := json.Unmarshal([]byte(s), &sc); err != nil {
		panic(err)
	}
	return &sc
}

// mcpServer is `askslack mcp`: a stdio MCP server a coding agent launches.
type mcpServer struct {
	client      *hostapi.Client
	agent       string
	session     string
	channel     string
	defaultWait time.Duration
	progress    time.Duration
}

// Run is `askslack mcp`: it serves the tools over stdio until stdin closes
// or a signal stops it.
func Run(args []string) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	url, token := cli.ClientFlags(fs)
	agent := fs.String("agent", cli.EnvOr("ASKSLACK_AGENT", "coding-agent"), "agent id shown in Slack (ASKSLACK_AGENT)")
	session := fs.String("session", os.Getenv("ASKSLACK_SESSION"), "session id that receives late answers (default: one per MCP server process)")
	channel := fs.String("channel", os.Getenv("ASKSLACK_MCP_CHANNEL"), "Slack channel id (default: the bot's ASKSLACK_CHANNEL)")
	wait := fs.Duration("wait", 5*time.Minute, "default answer window when the tool call gives no waitSeconds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *session == "" {
		*session = cli.NewCallID("mcp")
	}
	s := &mcpServer{
		client: &hostapi.Client{BaseURL: *url, Token: *token}, agent: *agent, session: *session,
		channel: *channel, defaultWait: *wait, progress: 5 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return s.server().Run(ctx, &mcp.StdioTransport{})
}

func (s *mcpServer) server() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "askslack", Version: "1"}, &mcp.ServerOptions{
		Instructions: "Ask the user questions in Slack. Use ask_user_question when you need a decision; " +
			"if it returns pending, go on with what does not depend on the answer: a later answer reaches you as a message by itself " +
			"(with askslack's hooks installed), and get_late_answers returns it too.",
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name: "ask_user_question",
		Description: "Ask the user 1-4 multiple-choice questions in Slack and wait for the answer. " +
			"The user can pick options or type their own answer. When the wait ends without an answer, the question " +
			"stays open in Slack (pending) and a later answer reaches you by itself, or through get_late_answers; never assume a default.",
		InputSchema: mustSchema(askSchema),
	}, s.ask)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "get_late_answers",
		Description: "Return (and acknowledge) answers that arrived in Slack after ask_user_question stopped waiting.",
		InputSchema: mustSchema(lateSchema),
	}, s.late)
	return srv
}

func (s *mcpServer) request(in askInput) (*waterfall.Request, map[string]string, error) {
	req := &waterfall.Request{
		CallID:  cli.NewCallID("mcp"),
		Agent:   waterfall.Agent{ID: s.agent, SessionID: s.session},
		Channel: s.channel,
	}
	ids := map[string]string{}
	for i, q := range in.Questions {
		id := fmt.Sprintf("q%d", i)
		wq := waterfall.Question{ID: id, Question: q.Question, Header: q.Header, MultiSelect: q.MultiSelect}
		for _, o := range q.Options {
			wq.Options = append(wq.Options, waterfall.Option{Label: o.Label, Description: o.Description, Preview: o.Preview})
		}
		req.Questions = append(req.Questions, wq)
		ids[id] = q.Question
	}
	wait := s.defaultWait
	if in.WaitSeconds != nil {
		wait = time.Duration(*in.WaitSeconds * float64(time.Second))
	}
	ms := float64(max(wait.Milliseconds(), 1))
	req.TimeoutMs = &ms
	return req, ids, waterfall.Validate(req)
}

func (s *mcpServer) ask(ctx context.Context, r *mcp.CallToolRequest, in askInput) (*mcp.CallToolResult, askOutput, error) {
	req, ids, err := s.request(in)
	if err != nil {
		return nil, askOutput{}, err
	}
	stopProgress := s.reportProgress(ctx, r, req.Timeout())
	res, err := s.client.Ask(ctx, req)
	stopProgress()
	if err != nil && ctx.Err() != nil {
		// The agent cancelled the tool call: that withdraws the question
		// (a dropped connection alone would only start the bot's grace).
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_, _ = s.client.Abort(actx, req.CallID)
		cancel()
	}
	out := askOutput{CallID: req.CallID, Questions: ids}
	switch {
	case err == nil && res.Pending:
		out.Pending = true
		out.Message = pendingMessage(req.CallID)
		return text(out.Message), out, nil
	case err == nil:
		out.Answers, out.Respondent = res.Answers, &res.Respondent
		out.Message = waterfall.Text(req.CallID, req.Questions, res.Settlement)
		return text(out.Message), out, nil
	case waterfall.CodeOf(err) == waterfall.CodeNoProvider:
		out.Message = "No human is available to answer right now; proceed with your best judgment."
		return text(out.Message), out, nil
	}
	return nil, out, err
}

// pendingMessage tells the model a question is still open: not to assume an
// answer, and that the answer will come by itself.
func pendingMessage(callID string) string {
	return fmt.Sprintf("No answer yet: the question stays open in Slack (call %s). Do not assume an answer; go on with "+
		"what does not depend on it. When a person answers, the answer reaches you by itself as a message naming "+
		"call %s (with askslack's hooks installed); get_late_answers returns it too.", callID, callID)
}

// reportProgress sends MCP progress notifications with the remaining time
// while the question waits, when the client asked for progress.
func (s *mcpServer) reportProgress(ctx context.Context, r *mcp.CallToolRequest, wait time.Duration) func() {
	token := r.Params.GetProgressToken()
	if token == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		t := time.NewTicker(s.progress)
		defer t.Stop()
		for {
			elapsed := time.Since(start)
			left := max(wait-elapsed, 0).Round(time.Second)
			_ = r.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: elapsed.Seconds(), Total: wait.Seconds(),
				Message: fmt.Sprintf("waiting for an answer in Slack; %s left", left),
			})
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (s *mcpServer) late(ctx context.Context, _ *mcp.CallToolRequest, in lateInput) (*mcp.CallToolResult, lateOutput, error) {
	wait := time.Duration(0)
	if in.WaitSeconds != nil {
		wait = time.Duration(*in.WaitSeconds * float64(time.Second))
	}
	msgs, err := s.client.Messages(ctx, s.session, wait)
	if err != nil {
		return nil, lateOutput{}, err
	}
	out := lateOutput{Messages: []waterfall.SteeredMessage{}}
	var parts []string
	var errs []error
	for _, m := range msgs {
		// Acknowledge only what is returned: an unacknowledged message is
		// redelivered by the next call. One a hook of the agent's
		// delivered first is not returned again.
		first, err := s.client.Admit(ctx, s.session, m.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !first {
			continue
		}
		out.Messages = append(out.Messages, m)
		parts = append(parts, m.Text)
	}
	if len(out.Messages) == 0 {
		if len(errs) > 0 {
			return nil, out, errors.Join(errs...)
		}
		return text("No late answers."), out, nil
	}
	return text(strings.Join(parts, "\n---\n")), out, nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
