package web

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/askslack/askslack/asktype"
)

// loginTTL is how long a sign-in started at Slack may take to come back.
const loginTTL = 10 * time.Minute

// loginCookie binds a sign-in to the browser that started it: a callback
// carrying a state this browser did not start (someone else's link, to sign
// the victim in as the attacker) is refused. With Secure cookies it has the
// __Host- prefix, so a sibling host cannot plant one (loginCookieName).
const loginCookie = "askslack_login"

func (s *Server) loginCookieName() (name, path string) {
	if s.secure {
		return "__Host-" + loginCookie, "/"
	}
	return loginCookie, "/app/auth/"
}

// login is a sign-in under way, kept in the store under its state's hash
// until the callback spends it (once, on any replica).
type login struct {
	Nonce string `json:"nonce"`
	Next  string `json:"next"`
}

func loginKey(state string) string { return "web:login:" + hashed(state) }

// signinBucket limits sign-ins per client address, across replicas: each
// start and each callback takes a token.
func signinBucket(addr string) asktype.Bucket {
	return asktype.Bucket{Name: "web-signin:" + addr, PerMinute: 30, Burst: 30}
}

// throttled takes a sign-in token for the request's client, and writes the
// refusal when there is none.
func (s *Server) throttled(w http.ResponseWriter, r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ok, err := s.keep.Take(r.Context(), signinBucket(host), s.clock.Now())
	if err != nil {
		s.log.Error("sign-in budget unavailable", "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "Signing in is unavailable just now; try again in a minute.")
		return true
	}
	if !ok {
		s.m.Web("signin", "limited")
		w.Header().Set("Retry-After", "60")
		s.fail(w, r, http.StatusTooManyRequests, "Too many sign-in attempts from your address; wait a minute and try again.")
		return true
	}
	return false
}

// localNext keeps a post-sign-in destination only when it is a path of this
// page: never another site, never a protocol-relative //host, never a
// backslash a browser would read as one.
func localNext(next string) string {
	if next == "" || !strings.HasPrefix(next, Prefix) || strings.ContainsAny(next, "\\\r\n\t") || strings.HasPrefix(next, "//") {
		return Prefix
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return Prefix
	}
	// Cleaned before the check: a redirect cleans the path, and
	// /app/../metrics would leave the page.
	trailing := strings.HasSuffix(u.Path, "/")
	u.Path = path.Clean(u.Path)
	if trailing && !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	if !strings.HasPrefix(u.Path, Prefix) {
		return Prefix
	}
	return u.RequestURI()
}

// login starts a sign-in: a fresh state and nonce, kept in the store, and
// the browser sent to Slack.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.throttled(w, r) {
		return
	}
	ctx := r.Context()
	team, err := s.team(ctx)
	if err != nil {
		s.log.Warn("cannot tell the bot's workspace for a sign-in", "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "Slack cannot be asked which workspace this is just now; try again in a minute.")
		return
	}
	state, nonce := token(32), token(32)
	to, err := s.oidc.authorize(ctx, state, nonce, team)
	if err != nil {
		s.log.Warn("cannot read Slack's OpenID configuration for a sign-in", "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "Slack cannot be reached to sign you in just now; try again in a minute.")
		return
	}
	b, _ := json.Marshal(login{Nonce: nonce, Next: localNext(r.URL.Query().Get("next"))})
	if err := s.keep.Put(ctx, loginKey(state), string(b), loginTTL, s.clock.Now()); err != nil {
		s.log.Error("storing a sign-in failed", "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "Signing in is unavailable just now; try again in a minute.")
		return
	}
	name, cpath := s.loginCookieName()
	s.setCookie(w, name, state, cpath, loginTTL)
	http.Redirect(w, r, to, http.StatusFound)
}

// callback finishes a sign-in: the state must be this browser's and unspent,
// the code must redeem for an ID token Slack signed for this app and this
// sign-in's nonce, naming a member of the bot's workspace whom the
// configuration admits. Only then is a session made, a fresh one.
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	if s.throttled(w, r) {
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	state := q.Get("state")
	name, cpath := s.loginCookieName()
	c, err := r.Cookie(name)
	s.setCookie(w, name, "", cpath, -1)
	if state == "" || err != nil || c.Value != state {
		s.refuse(w, r, "the sign-in did not start in this browser (or it took over 10 minutes)")
		return
	}
	// Spent here, whatever happens next: a state signs in at most once.
	raw, err := s.keep.Forget(ctx, loginKey(state), s.clock.Now())
	if err != nil {
		s.log.Error("reading a sign-in failed", "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "Signing in is unavailable just now; try again in a minute.")
		return
	}
	var l login
	if raw == "" || json.Unmarshal([]byte(raw), &l) != nil {
		s.refuse(w, r, "this sign-in was already used or has expired")
		return
	}
	if e := q.Get("error"); e != "" {
		s.refuse(w, r, "Slack says: "+e)
		return
	}
	code := q.Get("code")
	if code == "" {
		s.refuse(w, r, "Slack sent no code")
		return
	}
	id, err := s.oidc.redeem(ctx, code, l.Nonce)
	if err != nil {
		s.refuse(w, r, reason(err))
		if !isRefusal(err) {
			s.log.Error("redeeming a sign-in code failed", "err", err)
		}
		return
	}
	if !s.member(ctx, id.Team) {
		s.refuse(w, r, "you signed in to another Slack workspace than the bot's")
		return
	}
	admin := s.isAdmin(ctx, id.User)
	if ok, why := s.admitted(ctx, id.User, admin); !ok {
		s.refuse(w, r, why)
		return
	}
	// A session the browser had before is ended: the new one is fresh.
	if old, err := r.Cookie(s.cookieName()); err == nil && old.Value != "" {
		_, _ = s.keep.Forget(ctx, sessionKey(old.Value), s.clock.Now())
	}
	if _, err := s.start(ctx, w, id); err != nil {
		s.log.Error("storing a web session failed", "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "Signing in is unavailable just now; try again in a minute.")
		return
	}
	s.m.Web("signin", "ok")
	s.log.Info("signed in on the web", "user", id.User, "name", id.Name)
	http.Redirect(w, r, l.Next, http.StatusSeeOther)
}

// refuse tells a browser its sign-in was refused and why (never a secret).
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, why string) {
	s.m.Web("signin", "refused")
	s.log.Warn("web sign-in refused", "why", why, "remote", r.RemoteAddr)
	s.render(w, r, http.StatusForbidden, "signin", signinPage{Why: "Sign-in refused: " + why + ".", Next: Prefix})
}

func isRefusal(err error) bool {
	var e *errSignIn
	return errors.As(err, &e)
}

func reason(err error) string {
	var e *errSignIn
	if errors.As(err, &e) {
		return e.why
	}
	return "Slack could not be reached to finish it; try again"
}

// logout ends the session on every replica.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	sess := s.signedIn(w, r)
	if sess == nil {
		return
	}
	if !s.checkPost(w, r, sess, "") {
		return
	}
	if _, err := s.keep.Forget(r.Context(), sessionKey(sess.id), s.clock.Now()); err != nil {
		s.log.Error("ending a web session failed", "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "Signing out failed; try again.")
		return
	}
	s.setCookie(w, s.cookieName(), "", "/", -1)
	s.m.Web("logout", "ok")
	s.render(w, r, http.StatusOK, "signin", signinPage{Why: "You are signed out.", Next: Prefix})
}

// team is the workspace a sign-in is sent to ("" with several: Slack asks
// the person which).
func (s *Server) team(ctx context.Context) (string, error) {
	if s.opts.Member != nil {
		return "", nil
	}
	return s.opts.Team(ctx)
}

// member reports whether someone who signed in to team may use the page.
func (s *Server) member(ctx context.Context, team string) bool {
	if s.opts.Member != nil {
		return team != "" && s.opts.Member(ctx, team)
	}
	bot, err := s.opts.Team(ctx)
	return err == nil && team == bot
}
