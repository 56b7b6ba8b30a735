package slackbot

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/workspace"
)

// OAuth is installs.Slack with slack-go: the calls an install, a token
// refresh and an org-wide install's workspaces need. Its HTTP client is a
// plain one, not the bot's (whose transport gives every call a workspace's
// token): these calls carry the app's credentials or a token not yet kept.
type OAuth struct {
	ClientID, ClientSecret string
	// APIURL is the Web API's base ("" for Slack's); tests point it at a fake.
	APIURL string
	HTTP   *http.Client
	Now    func() time.Time
}

func (o *OAuth) opts() []slack.OAuthOption {
	if o.APIURL == "" {
		return nil
	}
	return []slack.OAuthOption{slack.OAuthOptionAPIURL(o.APIURL)}
}

func (o *OAuth) client(token string) *slack.Client {
	opts := []slack.Option{slack.OptionHTTPClient(o.HTTP)}
	if o.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(o.APIURL))
	}
	return slack.New(token, opts...)
}

// Redeem implements installs.Slack: oauth.v2.access with the code
// (https://docs.slack.dev/reference/methods/oauth.v2.access).
func (o *OAuth) Redeem(ctx context.Context, code, redirectURI string) (workspace.Installation, error) {
	r, err := slack.GetOAuthV2ResponseContext(ctx, o.HTTP, o.ClientID, o.ClientSecret, code, redirectURI, o.opts()...)
	if err != nil {
		return workspace.Installation{}, err
	}
	in := workspace.Installation{Team: r.Team.ID, TeamName: r.Team.Name, Enterprise: r.Enterprise.ID, EnterpriseName: r.Enterprise.Name,
		OrgWide: r.IsEnterpriseInstall, BotToken: r.AccessToken, BotUser: r.BotUserID, AppID: r.AppID,
		Scopes: strings.Split(r.Scope, ","), Installer: r.AuthedUser.ID, Refresh: r.RefreshToken}
	if in.OrgWide {
		in.Team, in.TeamName = "", ""
	}
	if r.ExpiresIn > 0 {
		in.Expires = o.Now().Add(time.Duration(r.ExpiresIn) * time.Second)
	}
	if at, err := o.client(in.BotToken).AuthTestContext(ctx); err == nil {
		in.BotID = at.BotID
	}
	return in, nil
}

// Refresh implements installs.Slack: oauth.v2.access with
// grant_type=refresh_token (https://docs.slack.dev/authentication/using-token-rotation).
func (o *OAuth) Refresh(ctx context.Context, refreshToken string) (workspace.Grant, error) {
	r, err := slack.RefreshOAuthV2TokenContext(ctx, o.HTTP, o.ClientID, o.ClientSecret, refreshToken, o.opts()...)
	if err != nil {
		return workspace.Grant{}, err
	}
	return workspace.Grant{Token: r.AccessToken, Refresh: r.RefreshToken, Expires: o.Now().Add(time.Duration(r.ExpiresIn) * time.Second)}, nil
}

// Teams implements installs.Slack: auth.teams.list, every page.
func (o *OAuth) Teams(ctx context.Context, token string) ([]string, error) {
	api := o.client(token)
	var out []string
	for cursor := ""; ; {
		teams, next, err := api.ListTeamsContext(ctx, slack.ListTeamsParameters{Limit: 200, Cursor: cursor})
		if err != nil {
			return out, err
		}
		for _, t := range teams {
			out = append(out, t.ID)
		}
		if next == "" {
			return out, nil
		}
		cursor = next
	}
}

// Revoke implements installs.Slack: auth.revoke.
func (o *OAuth) Revoke(ctx context.Context, token string) error {
	_, err := o.client(token).SendAuthRevokeContext(ctx, token)
	return err
}
