// Package workspace names the Slack workspace a piece of work belongs to
// when one deployment serves several (package installs keeps their
// installations): the installation itself, the context every Slack call
// carries its workspace and its actor in, and the errors of a call no
// installation serves. It imports only the standard library, so the Slack
// side (slackbot) reads it without knowing the store.
package workspace

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
	ErrNotInstalled = errors.New("workspace: askslack is not installed in this workspace")
	// ErrNoWorkspace: a Slack call whose context names no workspace. In a
	// deployment of several workspaces every call must name one: there is
	// no default token to fall back on.
	ErrNoWorkspace = errors.New("workspace: a Slack call named no workspace")
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

// Of returns the workspace ctx names, "" when none.
func Of(ctx context.Context) string {
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
	if t := Of(src); t != "" {
		dst = With(dst, t)
	}
	if p, ok := PersonOf(src); ok {
		dst = WithPerson(dst, p)
	}
	return dst
}

// Grant is a refreshed bot token (token rotation).
type Grant struct {
	Token, Refresh string
	Expires        time.Time
}
