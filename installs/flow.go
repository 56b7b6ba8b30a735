package installs

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/askslack/askslack/store"
)

// Slack is what installs asks of Slack's OAuth; the Slack side implements
// it (slackbot.OAuth, with slack-go).
type Slack interface {
	// Redeem exchanges an authorization code for an installation
	// (oauth.v2.access).
	Redeem(ctx context.Context, code, redirectURI string) (Installation, error)
	// Refresh exchanges a refresh token for a new bot token and refresh
	// token (oauth.v2.access with grant_type=refresh_token).
	Refresh(ctx context.Context, refreshToken string) (Grant, error)
	// Teams lists the workspaces an org-wide install was added to
	// (auth.teams.list).
	Teams(ctx context.Context, token string) ([]string, error)
	// Revoke revokes token (auth.revoke).
	Revoke(ctx context.Context, token string) error
}

// Flow is "Add to Slack" (https://docs.slack.dev/authentication/installing-with-oauth):
// GET /slack/install sends the installer to Slack's authorize page with the
// app's bot scopes and a state that is signed, bound to the browser by a
// cookie and spent once; GET /slack/oauth_redirect redeems the code and
// keeps the installation — unless the install was cancelled or failed,
// its state is forged, replayed or expired, or it is for a workspace the
// operator did not allow: each gets a page that says so, and nothing is
// kept (a token Slack issued for a refused workspace is revoked).
type Flow struct {
	Keeper *Keeper
	Slack  Slack
	// States keeps each state until it is spent (store.Notes: any replica
	// may get the redirect).
	States store.Notes
	// ClientID and Scopes are the app's; AuthorizeURL is Slack's
	// (https://slack.com/oauth/v2/authorize); RedirectURL this
	// deployment's /slack/oauth_redirect as Slack's app config lists it.
	ClientID     string
	Scopes       []string
	AuthorizeURL string
	RedirectURL  string
	// Allow are the team and enterprise ids that may install; "*" any.
	Allow []string
	// Secret signs states.
	Secret []byte
	Now    func() time.Time
	Log    *slog.Logger
	// Installed is told of each installation kept (after it is).
	Installed func(ctx context.Context, in Installation)
}

// StateTTL is how long an install link stays good.
const StateTTL = 10 * time.Minute

const stateCookie = "askslack_install"

// Register mounts the two routes on mux.
func (f *Flow) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /slack/install", f.install)
	mux.HandleFunc("GET /slack/oauth_redirect", f.redirect)
}

func (f *Flow) install(w http.ResponseWriter, r *http.Request) {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	n := hex.EncodeToString(nonce)
	if err := f.States.Put(r.Context(), stateKey(n), "1", StateTTL, f.Now()); err != nil {
		f.Log.Error("cannot keep an install's state", "err", err)
		f.page(w, http.StatusServiceUnavailable, "The install could not start", "askslack cannot reach its store. Try again in a moment.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: n, Path: "/slack/", MaxAge: int(StateTTL / time.Second),
		HttpOnly: true, Secure: strings.HasPrefix(f.RedirectURL, "https://"), SameSite: http.SameSiteLaxMode})
	q := url.Values{"client_id": {f.ClientID}, "scope": {strings.Join(f.Scopes, ",")}, "user_scope": {""},
		"redirect_uri": {f.RedirectURL}, "state": {n + "." + f.sign(n)}}
	if t := r.URL.Query().Get("team"); t != "" {
		q.Set("team", t) // Slack's hint for which workspace to install into
	}
	http.Redirect(w, r, f.AuthorizeURL+"?"+q.Encode(), http.StatusFound)
}

func (f *Flow) redirect(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ctx := r.Context()
	nonce, ok := f.spend(ctx, r, q.Get("state"))
	if !ok {
		f.page(w, http.StatusBadRequest, "This install link is not good any more",
			"It was already used, is older than 10 minutes, was opened in another browser, or was not made by askslack. Start again from the install link.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: "", Path: "/slack/", MaxAge: -1})
	if e := q.Get("error"); e != "" {
		f.Log.Info("an install was cancelled or refused at Slack", "error", e)
		f.page(w, http.StatusOK, "askslack was not installed", "Slack said: "+e+". Nothing was kept. You can start again from the install link.")
		return
	}
	in, err := f.Slack.Redeem(ctx, q.Get("code"), f.RedirectURL)
	if err != nil {
		f.Log.Warn("an install's code was not redeemed", "err", err, "state", nonce[:8])
		f.page(w, http.StatusBadGateway, "askslack was not installed", "Slack did not accept the install ("+err.Error()+"). Nothing was kept. Start again from the install link.")
		return
	}
	if !f.allowed(in) {
		f.Log.Warn("an install from a workspace not on ASKSLACK_INSTALL_TEAMS was refused", "team", in.Team, "enterprise", in.Enterprise, "installer", in.Installer)
		if err := f.Slack.Revoke(context.WithoutCancel(ctx), in.BotToken); err != nil {
			f.Log.Error("the refused install's token could not be revoked", "team", in.Team, "err", err)
		}
		f.page(w, http.StatusForbidden, "This workspace may not install askslack",
			"This deployment of askslack serves only the workspaces its operator allowed, and "+orgName(in)+" is not one of them. Nothing was kept; ask the operator to add "+in.Key()+" to ASKSLACK_INSTALL_TEAMS.")
		return
	}
	if in.OrgWide {
		if in.Teams, err = f.Slack.Teams(ctx, in.BotToken); err != nil {
			f.Log.Warn("the workspaces of an org-wide install could not be listed yet", "enterprise", in.Enterprise, "err", err)
		}
	}
	in.Installed = f.Now()
	if err := f.Keeper.Save(ctx, in); err != nil {
		f.Log.Error("an installation could not be kept", "key", in.Key(), "err", err)
		f.page(w, http.StatusServiceUnavailable, "askslack was not installed", "askslack cannot reach its store. Start again from the install link in a moment.")
		return
	}
	f.Log.Info("installed in a workspace", "team", in.Team, "enterprise", in.Enterprise, "orgWide", in.OrgWide, "installer", in.Installer, "rotating", !in.Expires.IsZero())
	if f.Installed != nil {
		f.Installed(ctx, in)
	}
	next := "Invite @askslack to the channel its questions go to (/invite @askslack), and connect agents with askslack login."
	if in.OrgWide {
		next = "An org-wide install serves only the workspaces an org admin adds askslack to (Manage apps → add to workspaces); then invite @askslack to their channels."
	}
	f.page(w, http.StatusOK, "askslack is installed in "+orgName(in), next)
}

// spend checks state's signature and its cookie, then spends it: true
// once, on whichever replica, for a state install made in this browser.
func (f *Flow) spend(ctx context.Context, r *http.Request, state string) (string, bool) {
	n, sig, ok := strings.Cut(state, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(f.sign(n))) {
		return "", false
	}
	c, err := r.Cookie(stateCookie)
	if err != nil || !hmac.Equal([]byte(c.Value), []byte(n)) {
		return "", false
	}
	v, err := f.States.Forget(ctx, stateKey(n), f.Now())
	return n, err == nil && v != ""
}

func (f *Flow) sign(nonce string) string {
	m := hmac.New(sha256.New, f.Secret)
	m.Write([]byte("askslack install state\x00" + nonce))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

func (f *Flow) allowed(in Installation) bool {
	return slices.Contains(f.Allow, "*") || in.Team != "" && slices.Contains(f.Allow, in.Team) ||
		in.Enterprise != "" && slices.Contains(f.Allow, in.Enterprise)
}

func stateKey(nonce string) string { return "install:state:" + nonce }

func orgName(in Installation) string {
	switch {
	case in.OrgWide && in.EnterpriseName != "":
		return in.EnterpriseName + " (" + in.Enterprise + ", org-wide)"
	case in.OrgWide:
		return in.Enterprise + " (org-wide)"
	case in.TeamName != "":
		return in.TeamName + " (" + in.Team + ")"
	}
	return in.Team
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.Title}} · askslack</title></head>
<body><main><h1>{{.Title}}</h1><p>{{.Body}}</p></main></body></html>
`))

func (f *Flow) page(w http.ResponseWriter, status int, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(status)
	if err := pageTmpl.Execute(w, struct{ Title, Body string }{title, body}); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		f.Log.Debug("an install page was not written whole", "err", err)
	}
}
