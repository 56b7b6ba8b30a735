// Package installs lets one deployment serve several Slack workspaces: the
// installations "Add to Slack" (OAuth v2) leaves behind, kept in the store
// sealed with AES-GCM (seal.go); the install and redirect routes (flow.go);
// which token a Slack call goes out with (transport.go: every call carries
// its workspace in its context, and a call that names none is refused, so
// nothing is ever posted with another workspace's token); the refresh of
// rotating tokens under a lease one replica holds (refresh.go); uninstall
// (Keeper.Uninstall). It links neither slack-go nor go-redis: what it asks of
// Slack goes through Slack, which the Slack side implements.
//
// With SLACK_BOT_TOKEN set the deployment serves its one workspace as
// before and nothing here runs.
package installs

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Installation is the app in one workspace, or org-wide in an Enterprise
// Grid organization (https://docs.slack.dev/enterprise-grid/).
type Installation struct {
	// Team is the workspace's id (T…), TeamName its name; empty for an
	// org-wide install, which has Enterprise and OrgWide instead.
	Team     string `json:"team,omitempty"`
	TeamName string `json:"teamName,omitempty"`
	// Enterprise is the Grid organization's id (E…) when the workspace is
	// part of one, or the install is org-wide.
	Enterprise     string `json:"enterprise,omitempty"`
	EnterpriseName string `json:"enterpriseName,omitempty"`
	OrgWide        bool   `json:"orgWide,omitempty"`
	// Teams are, for an org-wide install, the workspaces the org admin
	// added the app to (auth.teams.list): the only ones it serves.
	Teams []string `json:"teams,omitempty"`
	// The bot: its token (xoxb- or, with rotation, xoxe.xoxb-), user and
	// bot ids, the scopes Slack granted, and the app.
	BotToken string   `json:"botToken"`
	BotUser  string   `json:"botUser,omitempty"`
	BotID    string   `json:"botId,omitempty"`
	AppID    string   `json:"appId,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
	// Installer is the Slack user who installed it.
	Installer string `json:"installer,omitempty"`
	// Refresh and Expires are set when the app has token rotation on:
	// the refresh token and when BotToken stops working.
	Refresh   string    `json:"refresh,omitempty"`
	Expires   time.Time `json:"expires,omitzero"`
	Installed time.Time `json:"installed"`
	// Refreshed is when BotToken was last refreshed.
	Refreshed time.Time `json:"refreshed,omitzero"`
}

// Key is where the installation is kept: its enterprise for an org-wide
// install, else its workspace.
func (in Installation) Key() string {
	if in.OrgWide {
		return in.Enterprise
	}
	return in.Team
}

// Serves reports whether the installation serves workspace team.
func (in Installation) Serves(team string) bool {
	if in.OrgWide {
		return slices.Contains(in.Teams, team)
	}
	return in.Team == team
}

// Errors a caller tells apart.
var (
	// ErrNotInstalled: no installation serves the workspace (never
	// installed, uninstalled, or an org-wide install the org admin did
	// not add to it).
	ErrNotInstalled = errors.New("installs: askslack is not installed in this workspace")
	// ErrNoWorkspace: a Slack call whose context names no workspace. In a
	// deployment of several workspaces every call must name one: there is
	// no default token to fall back on.
	ErrNoWorkspace = errors.New("installs: a Slack call named no workspace")
)

type ctxKey struct{}

// With returns ctx naming workspace team: Slack calls made with it go out
// with that workspace's token.
func With(ctx context.Context, team string) context.Context {
	if team == "" {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, team)
}

// TeamOf returns the workspace ctx names, "" when none.
func TeamOf(ctx context.Context) string {
	t, _ := ctx.Value(ctxKey{}).(string)
	return t
}

// Person is who a payload says acts: the workspace they belong to (a
// Slack user's team_id: for a Grid user, their home workspace) and their
// organization.
type Person struct {
	Team, Enterprise string
}

type personKey struct{}

// WithPerson returns ctx carrying who acts; the workspace gate reads it.
func WithPerson(ctx context.Context, p Person) context.Context {
	return context.WithValue(ctx, personKey{}, p)
}

// PersonOf returns who ctx says acts, and whether it says.
func PersonOf(ctx context.Context) (Person, bool) {
	p, ok := ctx.Value(personKey{}).(Person)
	return p, ok
}

// Carry returns dst carrying the workspace and the person src carries:
// work queued from a request runs under its own context, not the
// request's.
func Carry(dst, src context.Context) context.Context {
	if t := TeamOf(src); t != "" {
		dst = With(dst, t)
	}
	if p, ok := PersonOf(src); ok {
		dst = WithPerson(dst, p)
	}
	return dst
}
