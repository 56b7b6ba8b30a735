package hostapi

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/askslack/askslack/workspace"

	"github.com/askslack/askslack/waterfall"
)

// Notice is the JSON of POST /v1/notices: a button-less FYI from an agent
// (`askslack hook claude` on Claude Code's Notification event). It is not an
// ask: nothing is stored, nothing can be answered, and the call returns as
// soon as the message is posted.
type Notice struct {
	Agent   waterfall.Agent `json:"agent"`
	Text    string          `json:"text"`
	Channel string          `json:"channel,omitempty"`
}

// maxNoticeText bounds a notice; Slack's section cap is 3000 characters.
const maxNoticeText = 3000

// Notifier posts notices (slackbot.Bot).
type Notifier interface {
	Notify(ctx context.Context, agent waterfall.Agent, text, channel string) error
}

func (s *Server) notice(w http.ResponseWriter, r *http.Request) {
	c, ok := s.require(w, r, RoleAgent, "only agent callers post notices")
	if !ok {
		return
	}
	var n Notice
	if err := decodeBody(w, r, &n); err != nil {
		s.fail(w, err)
		return
	}
	switch {
	case n.Agent.ID == "":
		s.fail(w, waterfall.Errorf(waterfall.CodeBadRequest, "agent.id is required"))
		return
	case strings.TrimSpace(n.Text) == "" || utf8.RuneCountInString(n.Text) > maxNoticeText || !utf8.ValidString(n.Text):
		s.fail(w, waterfall.Errorf(waterfall.CodeBadRequest, "text must be 1-%d characters of UTF-8", maxNoticeText))
		return
	case len(n.Channel) > waterfall.MaxChannelLen || strings.ContainsAny(n.Channel, " \t\n"):
		s.fail(w, waterfall.Errorf(waterfall.CodeBadRequest, "channel must be a Slack channel id"))
		return
	}
	if s.notifier == nil {
		s.fail(w, waterfall.Errorf(waterfall.CodeNoProvider, "this bot posts no notices"))
		return
	}
	var in waterfall.Request // the notice goes to its caller's workspace, as an ask would
	if err := s.bindWorkspace(r.Context(), c, &in); err != nil {
		s.fail(w, err)
		return
	}
	if err := s.notifier.Notify(workspace.With(r.Context(), in.Workspace), n.Agent, n.Text, n.Channel); err != nil {
		s.log.Warn("posting a notice failed", "agent", n.Agent.ID, "err", err)
		s.fail(w, waterfall.Errorf(waterfall.CodeNoProvider, "the notice could not be posted to Slack"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"posted": true})
}

// Notify posts a notice (POST /v1/notices).
func (c *Client) Notify(ctx context.Context, n Notice) error {
	return c.do(ctx, http.MethodPost, "/v1/notices", n, nil)
}
