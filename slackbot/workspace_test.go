package slackbot

import (
	"context"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/workspace"
)

type installsByTeam map[string]workspace.Installation

func (m installsByTeam) For(_ context.Context, team string) (workspace.Installation, error) {
	if in, ok := m[team]; ok {
		return in, nil
	}
	return workspace.Installation{}, workspace.ErrNotInstalled
}

type gridUsers map[string]*slack.User

func (g gridUsers) GetUserInfoContext(_ context.Context, user string, _ ...slack.GetUserInfoOption) (*slack.User, error) {
	if u, ok := g[user]; ok {
		return u, nil
	}
	return nil, slack.SlackErrorResponse{Err: "user_not_found"}
}

// Only people of an ask's own workspace answer it.
func TestWorkspaceGateAdmitsOnlyTheAsksWorkspace(t *testing.T) {
	ws := &Workspaces{Installs: installsByTeam{
		"TA": {Team: "TA"}, "TG1": {Enterprise: "E1", OrgWide: true, Teams: []string{"TG1", "TG2"}}, "TG2": {Enterprise: "E1", OrgWide: true, Teams: []string{"TG1", "TG2"}},
	}, Connect: []string{"TPARTNER"}}
	users := gridUsers{
		"WIN":  {ID: "WIN", Enterprise: slack.EnterpriseUser{EnterpriseID: "E1", Teams: []string{"TG1", "TG2"}}},
		"WOUT": {ID: "WOUT", Enterprise: slack.EnterpriseUser{EnterpriseID: "E1", Teams: []string{"TG1"}}},
	}
	g := WorkspaceGate{Next: Everyone{}, WS: ws, Users: users}
	as := func(team string) context.Context {
		return workspace.WithPerson(context.Background(), workspace.Person{Team: team})
	}
	for _, c := range []struct {
		name, user, askWS string
		ctx               context.Context
		ok                bool
		why               string
	}{
		{"own workspace", "U1", "TA", as("TA"), true, ""},
		{"another organization", "U2", "TA", as("TB"), false, "another organization"},
		{"an allowed partner (Slack Connect)", "U3", "TA", as("TPARTNER"), true, ""},
		{"a Grid member of the ask's workspace", "WIN", "TG2", as("TG1"), true, ""},
		{"a Grid user not in the ask's workspace", "WOUT", "TG2", as("TG1"), false, "not a member"},
		{"someone Slack does not know in the organization", "U9", "TG2", as("TX"), false, "another organization"},
		{"no workspace in the context", "U1", "TA", context.Background(), false, "couldn't tell which workspace"},
		{"one workspace (the ask names none)", "U1", "", context.Background(), true, ""},
	} {
		ok, why := g.Allowed(c.ctx, c.user, &waterfall.Request{Workspace: c.askWS})
		if ok != c.ok || !strings.Contains(why, c.why) {
			t.Errorf("%s: %v %q, want %v %q", c.name, ok, why, c.ok, c.why)
		}
	}
	// The gate runs before the next Authorizer, which still decides.
	g.Next = refuseAll{}
	if ok, _ := g.Allowed(as("TA"), "U1", &waterfall.Request{Workspace: "TA"}); ok {
		t.Error("the gate let through what the next Authorizer refuses")
	}
}
