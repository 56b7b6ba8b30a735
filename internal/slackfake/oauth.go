package slackfake

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// OAuth v2, Slack's install flow (https://docs.slack.dev/authentication/installing-with-oauth):
//
//  1. the app sends the installer to /oauth/v2/authorize?client_id&scope&
//     user_scope&redirect_uri&state[&team];
//  2. they pick a workspace (or, for an Enterprise Grid org admin, the
//     whole organization) and Slack redirects to redirect_uri with code and
//     state (error=access_denied&state=… when they cancel);
//  3. the app redeems the code with oauth.v2.access and gets the bot token
//     (https://docs.slack.dev/reference/methods/oauth.v2.access).
//
// With token rotation (https://docs.slack.dev/authentication/using-token-rotation)
// the bot token expires (expires_in, 12 hours) and comes with a refresh
// token; oauth.v2.access with grant_type=refresh_token issues a new pair.

const (
	// oauthCodeTTL: "temporary authorization codes … expire after ten
	// minutes" (installing-with-oauth).
	oauthCodeTTL = 10 * time.Minute
	// maxActiveTokens: "we will enforce a limit of 2 active tokens. If more
	// than 2 tokens exist after the refresh, the oldest additional token
	// will be revoked" (using-token-rotation).
	maxActiveTokens = 2
)

// botScopes are the scopes /oauth/v2/authorize accepts, bot and user
// alike (https://docs.slack.dev/reference/scopes); a scope not among them
// gets Slack's "Invalid permissions requested" page.
var botScopes = []string{
	"app_mentions:read", "assistant:write", "bookmarks:read", "bookmarks:write", "calls:read", "calls:write",
	"canvases:read", "canvases:write", "channels:history", "channels:join", "channels:manage", "channels:read",
	"channels:write.invites", "channels:write.topic", "chat:write", "chat:write.customize", "chat:write.public",
	"commands", "conversations.connect:manage", "conversations.connect:read", "conversations.connect:write",
	"dnd:read", "emoji:read", "files:read", "files:write", "groups:history", "groups:read", "groups:write",
	"groups:write.invites", "groups:write.topic", "im:history", "im:read", "im:write", "im:write.topic",
	"incoming-webhook", "links.embed:write", "links:read", "links:write", "metadata.message:read",
	"mpim:history", "mpim:read", "mpim:write", "mpim:write.topic", "pins:read", "pins:write",
	"reactions:read", "reactions:write", "reminders:read", "reminders:write", "remote_files:read",
	"remote_files:share", "remote_files:write", "search:read.public", "team.billing:read", "team.preferences:read",
	"team:read", "usergroups:read", "usergroups:write", "users.profile:read", "users:read", "users:read.email",
	"users:write", "workflow.steps:execute",
	// user-token scopes apps commonly ask with user_scope
	"identity.basic", "identity.email", "identity.avatar", "identity.team", "search:read", "users.profile:write",
}

// oauthCode is one authorization code.
type oauthCode struct {
	code         string
	id           string // the team, or the enterprise of an org-wide install
	orgWide      bool
	installer    User
	scopes       []string
	userScopes   []string
	redirect     string
	redirectSent bool // redirect_uri was in the authorize request, so oauth.v2.access must repeat it
	issued       time.Time
	used         bool
}

// Authorize issues an authorization code as if installer had approved the
// install into a workspace (or, orgWide, into the organization
// teamOrEnterpriseID), with these bot scopes, and no redirect_uri. Redeem
// it with oauth.v2.access.
func (s *Server) Authorize(teamOrEnterpriseID string, installer User, orgWide bool, scopes []string) (code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issueCodeLocked(&oauthCode{id: teamOrEnterpriseID, orgWide: orgWide, installer: s.fullUserLocked(installer),
		scopes: slices.Clone(scopes)})
}

func (s *Server) issueCodeLocked(c *oauthCode) string {
	s.ws.seq++
	// Shaped like the code in Slack's method reference: "4724469134.4644010092847.232b…".
	c.code = fmt.Sprintf("%d.%d.%s", 4724469134, 4644010092847+int64(s.ws.seq), randHex(32))
	c.issued = s.opts.Now()
	if s.ws.codes == nil {
		s.ws.codes = map[string]*oauthCode{}
	}
	s.ws.codes[c.code] = c
	s.notifyLocked()
	return c.code
}

// splitScopes reads a scope list: Slack's are comma separated; spaces are
// accepted too.
func splitScopes(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
}

// oauthRequest is a validated /oauth/v2/authorize query.
type oauthRequest struct {
	query        url.Values // as received, less the fake's own parameters
	redirect     string
	redirectSent bool
	scopes       []string
	userScopes   []string
	team         string // team=…: restrict the install to this workspace
}

// checkOAuthAuthorize validates an authorize query, or says what is wrong
// with it; like the OIDC page, every problem is shown on Slack's side,
// never sent to a redirect_uri not known to be the app's.
func (s *Server) checkOAuthAuthorize(q url.Values) (oauthRequest, string) {
	a := oauthRequest{query: url.Values{}}
	for k, v := range q {
		if !strings.HasPrefix(k, "fake_") {
			a.query[k] = v
		}
	}
	switch id := q.Get("client_id"); {
	case s.opts.ClientID == "":
		return a, "OAuth is not set up on this fake Slack (Options.ClientID is empty)."
	case id == "":
		return a, "Missing client_id parameter."
	case id != s.opts.ClientID:
		return a, "Invalid client_id parameter."
	}
	a.redirect, a.redirectSent = q.Get("redirect_uri"), q.Has("redirect_uri")
	if !a.redirectSent {
		// redirect_uri is optional: Slack then uses the app's configured
		// Redirect URL (installing-with-oauth).
		if len(s.opts.OAuthRedirectURIs) == 0 {
			return a, "Missing redirect_uri parameter, and the app has no Redirect URLs configured."
		}
		a.redirect = s.opts.OAuthRedirectURIs[0]
	}
	u, err := url.Parse(a.redirect)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return a, "Invalid redirect_uri: it must be an absolute http(s) URL. Passed URI: " + a.redirect
	case strings.Contains(a.redirect, "#"):
		return a, "Invalid redirect_uri: it must not have a fragment. Passed URI: " + a.redirect
	case len(s.opts.OAuthRedirectURIs) > 0 && !slices.Contains(s.opts.OAuthRedirectURIs, a.redirect):
		return a, "redirect_uri did not match any configured URIs. Passed URI: " + a.redirect
	}
	a.scopes, a.userScopes = splitScopes(q.Get("scope")), splitScopes(q.Get("user_scope"))
	if len(a.scopes) == 0 && len(a.userScopes) == 0 {
		return a, "Invalid permissions requested: no scope or user_scope."
	}
	for _, sc := range append(slices.Clone(a.scopes), a.userScopes...) {
		if !slices.Contains(botScopes, sc) {
			return a, fmt.Sprintf("Invalid permissions requested: %q is not a Slack scope.", sc)
		}
	}
	a.team = q.Get("team")
	return a, ""
}

// handleOAuthAuthorize is Slack's /oauth/v2/authorize. Slack would show
// the person a consent screen with a workspace picker; the fake has no
// passwords, so the person is fake_user=U… (a list of people without it),
// and the page lists where they may install: each of their workspaces
// (a[data-team]), their organization for an org-wide install
// (a[data-enterprise]), and Cancel (a[data-cancel]).
func (s *Server) handleOAuthAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, problem := s.checkOAuthAuthorize(q)
	if problem != "" {
		s.logf("slackfake: oauth/v2/authorize refused: %s", problem)
		s.writeInstallPage(w, http.StatusBadRequest, installPage{Error: problem})
		return
	}
	state := q.Get("state")
	uid := q.Get("fake_user")
	if uid == "" && len(s.opts.Users) > 0 {
		s.writeInstallPage(w, http.StatusOK, s.installPickerPage(a, state))
		return
	}
	if uid == "" {
		uid = "U0INSTALLER" // no people configured: anyone may install anywhere
	}
	u, known := s.user(uid)
	if !known {
		s.writeInstallPage(w, http.StatusBadRequest, installPage{Error: "Unknown user " + uid + "."})
		return
	}
	s.mu.Lock()
	u = s.fullUserLocked(u)
	teams, ents := s.installTargetsLocked(a, u)
	s.mu.Unlock()
	target, orgWide := q.Get("fake_team"), false
	if e := q.Get("fake_enterprise"); e != "" {
		target, orgWide = e, true
	}
	if target == "" {
		s.writeInstallPage(w, http.StatusOK, s.installChoicePage(a, state, u, teams, ents))
		return
	}
	if (!orgWide && !slices.ContainsFunc(teams, func(t Team) bool { return t.ID == target })) ||
		(orgWide && !slices.Contains(ents, target)) {
		s.writeInstallPage(w, http.StatusForbidden, installPage{Error: fmt.Sprintf("%s may not install the app into %s.", u.ID, target)})
		return
	}
	s.mu.Lock()
	code := s.issueCodeLocked(&oauthCode{id: target, orgWide: orgWide, installer: u, scopes: a.scopes,
		userScopes: a.userScopes, redirect: a.redirect, redirectSent: a.redirectSent})
	s.mu.Unlock()
	back := url.Values{"code": {code}}
	if state != "" {
		back.Set("state", state)
	}
	s.logf("slackfake: oauth/v2/authorize: %s installs into %s, code sent to %s", u.ID, target, a.redirect)
	http.Redirect(w, r, withQuery(a.redirect, back), http.StatusFound)
}

// installTargetsLocked is where u may install: their workspaces (every
// workspace when the fake has no people), limited to team=… when given,
// and the Grid organizations of those workspaces, for an org-wide install.
func (s *Server) installTargetsLocked(a oauthRequest, u User) ([]Team, []string) {
	var teams []Team
	var ents []string
	ids := userTeams(u)
	if len(s.opts.Users) == 0 {
		ids = s.ws.order
	}
	for _, id := range ids {
		if a.team != "" && id != a.team {
			continue
		}
		t := s.teamLocked(id)
		teams = append(teams, t)
		if t.EnterpriseID != "" && !slices.Contains(ents, t.EnterpriseID) {
			ents = append(ents, t.EnterpriseID)
		}
	}
	return teams, ents
}

// handleOAuthAccess is oauth.v2.access: a Web API method (recorded in
// Calls; FailNext, HoldNext, DelayNext and DropNext apply) authenticated
// by the app's client_id and client_secret, as form fields or HTTP Basic
// (the method page's advice), not by a token.
func (s *Server) handleOAuthAccess(w http.ResponseWriter, r *http.Request) {
	const method = "oauth.v2.access"
	body, _ := io.ReadAll(r.Body)
	params, _ := parseParams(r, body)
	clientID, secret := params["client_id"], params["client_secret"]
	if id, sec, basic := r.BasicAuth(); basic {
		if v, err := url.QueryUnescape(id); err == nil && clientID == "" {
			clientID = v
		}
		if v, err := url.QueryUnescape(sec); err == nil && secret == "" {
			secret = v
		}
	}
	if h := s.takeHold(method); h != nil && !s.held(r, h) {
		return
	}
	s.serve(w, r, method, params, body, func() reply {
		if rep, stopped := s.faultedLocked(method, params); stopped {
			return rep
		}
		if s.opts.ClientID == "" || clientID != s.opts.ClientID {
			return fail("invalid_client_id")
		}
		if s.opts.ClientSecret != "" && secret != s.opts.ClientSecret {
			return fail("bad_client_secret")
		}
		switch gt := params["grant_type"]; gt {
		case "", "authorization_code":
			return s.redeemCodeLocked(params)
		case "refresh_token":
			return s.refreshLocked(params["refresh_token"])
		default:
			return fail("invalid_grant_type")
		}
	})
}

// redeemCodeLocked exchanges a code for the installation's tokens.
func (s *Server) redeemCodeLocked(p map[string]string) reply {
	c := s.ws.codes[p["code"]]
	if c == nil || c.used || s.opts.Now().Sub(c.issued) > oauthCodeTTL {
		return fail("invalid_code")
	}
	// "This must match the originally submitted URI (if one was sent)."
	if ru, given := p["redirect_uri"]; (given || c.redirectSent) && ru != c.redirect {
		return fail("bad_redirect_uri")
	}
	if !c.orgWide {
		if e := s.teamLocked(c.id).EnterpriseID; e != "" {
			if org, ok := s.ws.installs[e]; ok && org.OrgWide && !org.uninstalled {
				return fail("cannot_install_an_org_installed_app")
			}
		}
	}
	c.used = true
	in := Installation{OrgWide: c.orgWide, Scopes: slices.Clone(c.scopes), Installer: c.installer.ID}
	if c.orgWide {
		in.EnterpriseID = c.id
	} else {
		in.TeamID = c.id
	}
	rec := s.installLocked(in)
	s.callTeam = rec.key()
	rep := s.tokenReplyLocked(rec)
	authed := map[string]any{"id": c.installer.ID}
	if len(c.userScopes) > 0 {
		s.ws.seq++
		utok := fmt.Sprintf("xoxp-%d-%d-%s", 1234+s.ws.seq, 5678+s.ws.seq, randAlnum(24))
		s.ws.tokens[utok] = &token{inst: rec, issued: s.opts.Now(), user: true}
		rec.userToken = utok
		authed["scope"] = strings.Join(c.userScopes, ",")
		authed["access_token"] = utok
		authed["token_type"] = "user"
	}
	rep.body["authed_user"] = authed
	s.logf("slackfake: oauth.v2.access: installed into %s by %s", rec.key(), c.installer.ID)
	return rep
}

// tokenReplyLocked is the body oauth.v2.access answers for an install:
// the bot token and who it is (the method page's example; team null and
// is_enterprise_install true for an org-wide install,
// https://api.slack.com/enterprise/apps/reference), with expires_in and
// refresh_token under token rotation.
func (s *Server) tokenReplyLocked(rec *install) reply {
	var team, ent any
	if !rec.OrgWide {
		t := s.teamLocked(rec.TeamID)
		team = map[string]any{"id": t.ID, "name": t.Name}
	}
	if rec.EnterpriseID != "" {
		ent = map[string]any{"id": rec.EnterpriseID, "name": s.enterpriseNameLocked(rec.EnterpriseID)}
	}
	rep := ok("access_token", rec.BotToken, "token_type", "bot", "scope", strings.Join(rec.Scopes, ","),
		"bot_user_id", rec.BotUserID, "app_id", rec.AppID, "team", team, "enterprise", ent,
		"is_enterprise_install", rec.OrgWide)
	if rec.RefreshToken != "" {
		rep.body["refresh_token"] = rec.RefreshToken
		rep.body["expires_in"] = int(rec.ExpiresAt.Sub(s.opts.Now()).Seconds())
	}
	return rep
}
