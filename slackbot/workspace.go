package slackbot

import (
	"context"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/workspace"
)

// Workspaces is what the bot knows of the workspaces it serves when one
// deployment serves several (package installs); nil with one, and then
// nothing here runs. Every payload is resolved to the workspace whose
// installation serves it (refused when none does), and every Slack call
// made for it carries that workspace (workspace.With), so its token.
type Workspaces struct {
	Installs interface {
		For(ctx context.Context, team string) (workspace.Installation, error)
	}
	// Channels are each workspace's default channel for questions
	// (ASKSLACK_WORKSPACE_CHANNELS); an ask's own channel wins.
	Channels map[string]string
	// Connect are the other organizations (team or enterprise ids) whose
	// people may answer in channels shared with them (Slack Connect;
	// ASKSLACK_CONNECT_TEAMS). Empty: nobody from outside.
	Connect []string
}

// serving returns the first of teams an installation serves.
func (w *Workspaces) serving(ctx context.Context, teams ...string) (string, bool) {
	for _, t := range teams {
		if t == "" {
			continue
		}
		if _, err := w.Installs.For(ctx, t); err == nil {
			return t, true
		}
	}
	return "", false
}

// interaction resolves an interaction payload: the workspace it happened
// in, else the clicker's own (a shared channel's click may name either).
// ctx comes back carrying the workspace and who acts.
func (b *Bot) interaction(ctx context.Context, ic *slack.InteractionCallback) (context.Context, bool) {
	if b.ws == nil {
		return ctx, true
	}
	// A modal submitted by someone from another organization names their
	// workspace in team, the installed one in view.app_installed_team_id
	// (https://github.com/slackapi/bolt-js/issues/1614).
	team, ok := b.ws.serving(ctx, ic.Team.ID, ic.View.AppInstalledTeamID, ic.User.TeamID)
	if !ok {
		b.log.Warn("an interaction from a workspace askslack is not installed in was refused", "team", ic.Team.ID, "userTeam", ic.User.TeamID,
			"enterprise", ic.Enterprise.ID, "user", ic.User.ID)
		return ctx, false
	}
	who := ic.User.TeamID
	if who == "" {
		who = ic.Team.ID
	}
	return workspace.WithPerson(workspace.With(ctx, team), workspace.Person{Team: who, Enterprise: ic.Enterprise.ID}), true
}

// payload resolves an event's or a command's workspace (team_id; for an
// org-wide install the workspace in it), with who acts.
func (b *Bot) payload(ctx context.Context, team, userTeam, enterprise string) (context.Context, bool) {
	if b.ws == nil {
		return ctx, true
	}
	t, ok := b.ws.serving(ctx, team, userTeam)
	if !ok {
		b.log.Warn("a payload from a workspace askslack is not installed in was refused", "team", team, "userTeam", userTeam, "enterprise", enterprise)
		return ctx, false
	}
	if userTeam == "" {
		userTeam = team
	}
	return workspace.WithPerson(workspace.With(ctx, t), workspace.Person{Team: userTeam, Enterprise: enterprise}), true
}

// forAsk makes ctx's Slack calls go out with req's workspace's token.
func forAsk(ctx context.Context, req *waterfall.Request) context.Context {
	if req == nil {
		return ctx
	}
	return workspace.With(ctx, req.Workspace)
}

// Refusals of the workspace gate.
const (
	whyOtherWorkspace = "This question belongs to another workspace of this organization, and you are not a member of it."
	whyOtherOrg       = "This question belongs to another organization: people from your organization cannot answer it here (Slack Connect)."
	whyNoWorkspace    = "Sorry, I couldn't tell which workspace you are in; please try again from Slack."
)

// WorkspaceGate is the Authorizer of a deployment serving several
// workspaces: only people of an ask's own workspace answer it — a Grid
// user (whose id is org-wide) when Slack says they are a member of it,
// someone from another organization in a shared channel only when the
// operator allows that organization — and then Next decides as before.
type WorkspaceGate struct {
	Next Authorizer
	WS   *Workspaces
	// Users reads a Grid user's workspaces (users.info).
	Users interface {
		GetUserInfoContext(ctx context.Context, user string, options ...slack.GetUserInfoOption) (*slack.User, error)
	}
}

// Allowed implements Authorizer.
func (g WorkspaceGate) Allowed(ctx context.Context, userID string, req *waterfall.Request) (bool, string) {
	if ws := req.Workspace; ws != "" {
		if ok, why := g.member(ctx, userID, ws); !ok {
			return false, why
		}
	}
	return g.Next.Allowed(ctx, userID, req)
}

func (g WorkspaceGate) member(ctx context.Context, userID, ws string) (bool, string) {
	p, ok := workspace.PersonOf(ctx)
	switch {
	case !ok || p.Team == "":
		return false, whyNoWorkspace
	case p.Team == ws:
		return true, ""
	case slices.Contains(g.WS.Connect, p.Team) || p.Enterprise != "" && slices.Contains(g.WS.Connect, p.Enterprise):
		return true, ""
	}
	in, err := g.WS.Installs.For(ctx, ws)
	if err != nil || in.Enterprise == "" {
		return false, whyOtherOrg
	}
	// The ask's workspace is in a Grid organization, where a user's id is
	// the organization's and team_id their home workspace (a payload's
	// enterprise is the workspace's, not the user's): Slack says whether
	// they are of this organization and a member of this workspace.
	u, err := g.Users.GetUserInfoContext(workspace.With(ctx, ws), userID)
	switch {
	case SlackError(err) == "user_not_found":
		return false, whyOtherOrg
	case err != nil:
		return false, whyUnchecked
	case u.Enterprise.EnterpriseID != in.Enterprise:
		return false, whyOtherOrg
	case slices.Contains(u.Enterprise.Teams, ws):
		return true, ""
	}
	return false, whyOtherWorkspace
}

// visitorKey is how a Home tab visitor is remembered: with several
// workspaces, with the workspace the tab is in and who the person is, so
// the refresh publishes it with that workspace's token.
func (b *Bot) visitorKey(ctx context.Context, user string) string {
	if b.ws == nil {
		return user
	}
	p, _ := workspace.PersonOf(ctx)
	return workspace.Of(ctx) + "|" + p.Team + "|" + p.Enterprise + "|" + user
}

// fromVisitor reverses visitorKey.
func (b *Bot) fromVisitor(ctx context.Context, key string) (context.Context, string) {
	f := strings.Split(key, "|")
	if b.ws == nil || len(f) != 4 {
		return ctx, key
	}
	return workspace.WithPerson(workspace.With(ctx, f[0]), workspace.Person{Team: f[1], Enterprise: f[2]}), f[3]
}
