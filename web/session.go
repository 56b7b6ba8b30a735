package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/workspace"
)

// session is one signed-in browser, kept in the store (every replica reads
// the same one, and signing out ends it everywhere). Its id is only in the
// cookie: the store holds the id's hash, so a store dump signs nobody in.
type session struct {
	id      string
	User    string    `json:"user"`
	Name    string    `json:"name,omitempty"`
	Team    string    `json:"team"`
	CSRF    string    `json:"csrf"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	// Admin is whether the console is theirs, decided at each request.
	Admin bool `json:"-"`
}

// respondent is who answers through this session.
func (s *session) respondent(now time.Time) waterfall.Respondent {
	return waterfall.Respondent{UserID: s.User, UserName: s.Name, Surface: waterfall.SurfaceWeb, At: now}
}

// token returns n random bytes, base64url: session ids, CSRF tokens,
// sign-in states and nonces.
func token(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashed(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

func sessionKey(id string) string { return "web:session:" + hashed(id) }

// cookieName: with Secure, the __Host- prefix makes browsers refuse the
// cookie unless it is Secure, host-only and for path / — nothing on a
// sibling subdomain can plant or shadow it.
func (s *Server) cookieName() string {
	if s.secure {
		return "__Host-askslack"
	}
	return "askslack"
}

func (s *Server) setCookie(w http.ResponseWriter, name, value, path string, maxAge time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: path, HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode,
		MaxAge: int(maxAge / time.Second)}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// start creates a fresh session for who signed in (never one the browser
// brought: no fixation) and sets its cookie.
func (s *Server) start(ctx context.Context, w http.ResponseWriter, id identity) (*session, error) {
	now := s.clock.Now()
	sess := &session{id: token(32), User: id.User, Name: id.Name, Team: id.Team, CSRF: token(32), Created: now, Expires: now.Add(s.opts.SessionTTL)}
	b, _ := json.Marshal(sess)
	if err := s.keep.Put(ctx, sessionKey(sess.id), string(b), s.opts.SessionTTL, now); err != nil {
		return nil, err
	}
	s.setCookie(w, s.cookieName(), sess.id, "/", s.opts.SessionTTL)
	return sess, nil
}

// errSignedOut: no session, an unknown or tampered cookie, an expired or
// signed-out session.
type signedOut struct{ why string }

// current is the request's session, or why there is none. A session whose
// person the configuration no longer admits (taken off the allowlist, out
// of its groups) is ended, here, on whichever replica sees it first.
func (s *Server) current(r *http.Request) (*session, *signedOut) {
	c, err := r.Cookie(s.cookieName())
	if err != nil || c.Value == "" {
		return nil, &signedOut{}
	}
	ctx := r.Context()
	now := s.clock.Now()
	raw, err := s.keep.Remember(ctx, sessionKey(c.Value), "", time.Minute, now)
	if err != nil {
		s.log.Error("reading a web session failed", "err", err)
		return nil, &signedOut{why: "Sessions cannot be read just now; try again in a minute."}
	}
	if raw == "" {
		return nil, &signedOut{why: "Your session has ended; sign in again."}
	}
	var sess session
	if err := json.Unmarshal([]byte(raw), &sess); err != nil || !now.Before(sess.Expires) {
		return nil, &signedOut{why: "Your session has ended; sign in again."}
	}
	sess.id = c.Value
	sess.Admin = s.isAdmin(ctx, sess.User)
	if ok, why := s.admitted(ctx, sess.User, sess.Admin); !ok {
		_, _ = s.keep.Forget(ctx, sessionKey(sess.id), now)
		s.log.Info("ended a web session the configuration no longer admits", "user", sess.User, "why", why)
		return nil, &signedOut{why: why}
	}
	return &sess, nil
}

// admitted reports whether user may hold a session: someone who may
// answer, an admin, or someone who may connect agents (askslack login).
func (s *Server) admitted(ctx context.Context, user string, admin bool) (bool, string) {
	ok, why := s.authz.Allowed(ctx, user, &waterfall.Request{})
	if ok || admin {
		return true, ""
	}
	if s.opts.Devices != nil {
		if may, _ := s.opts.Devices.MayConnect(ctx, user); may {
			return true, ""
		}
	}
	return false, why
}

func (s *Server) isAdmin(ctx context.Context, user string) bool {
	if s.admins == nil {
		return false
	}
	ok, _ := s.admins.Allowed(ctx, user, &waterfall.Request{})
	return ok
}

// signedIn is current for a page: with no session it sends the browser to
// sign in and returns nil.
func (s *Server) signedIn(w http.ResponseWriter, r *http.Request) *session {
	sess, out := s.current(r)
	if sess != nil {
		// What the person does here is done in the workspace they signed
		// in to, as a click in it would be (several workspaces: the
		// Authorizer's workspace gate reads it).
		*r = *r.WithContext(workspace.WithPerson(workspace.With(r.Context(), sess.Team), workspace.Person{Team: sess.Team}))
		return sess
	}
	if r.Method == http.MethodGet {
		s.render(w, r, http.StatusUnauthorized, "signin", signinPage{Why: out.why, Next: r.URL.RequestURI()})
		return nil
	}
	s.fail(w, r, http.StatusUnauthorized, "You are not signed in (or your session ended): nothing was changed.")
	return nil
}

// checkPost guards a state-changing request past crossOrigin: the session's
// CSRF token must come with the form. That covers the browsers
// http.CrossOriginProtection lets through, old enough to send neither
// Sec-Fetch-Site nor Origin. It writes the refusal and reports false. A
// refusal is recorded in the audit trail as a refused click is (the engine
// bounds refusals per person): the signed-in person, what was refused and
// why, and callID's ask when the post was an answer to one that exists.
func (s *Server) checkPost(w http.ResponseWriter, r *http.Request, sess *session, callID string) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	got := r.PostFormValue("csrf")
	if got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRF)) == 1 {
		return true
	}
	s.m.Web("csrf", "refused")
	s.refusedPost(r, sess, callID, "its form's CSRF token is missing or wrong")
	s.fail(w, r, http.StatusForbidden, "Refused: the form's security token is missing or wrong. Reload the page and try again.")
	return false
}

// crossOrigin is http.CrossOriginProtection's refusal of a post from
// another origin, before its handler: recorded as checkPost's are, when
// the browser has a session, with the header that told.
func (s *Server) crossOrigin(w http.ResponseWriter, r *http.Request) {
	why := "it came from another origin (Origin)"
	if r.Header.Get("Sec-Fetch-Site") != "" {
		why = "the browser says it came from another site (Sec-Fetch-Site)"
	}
	s.m.Web("csrf", "refused")
	if sess, _ := s.current(r); sess != nil {
		callID := ""
		if r.Pattern == answerRoute {
			callID = r.PathValue("id")
		}
		s.refusedPost(r, sess, callID, why)
	} else {
		s.log.Warn("web post refused", "path", cutRunes(r.URL.Path, 200), "why", why, "remote", r.RemoteAddr)
	}
	s.fail(w, r, http.StatusForbidden, "Refused: the request did not come from this page.")
}

// refusedPost records a refused post in the audit trail. The path is cut:
// it is the sender's text.
func (s *Server) refusedPost(r *http.Request, sess *session, callID, why string) {
	ctx := r.Context()
	who := sess.respondent(s.clock.Now())
	why = "the answer page refused a post to " + cutRunes(r.URL.Path, 200) + ": " + why
	if callID != "" {
		if rec, err := s.host.Current(ctx, callID); err == nil {
			s.host.Refused(ctx, waterfall.RefusedClick(rec, who, why))
			return
		}
	}
	s.host.Refused(ctx, waterfall.Refusal{Key: "slack:" + who.UserID, Why: why,
		Who: &asktype.AuditRespondent{UserID: who.UserID, UserName: who.UserName, Surface: who.Surface}})
}

// cutRunes is s cut to n characters, ending in "…" when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// maxForm bounds a form: a typed answer, not a file.
const maxForm = 256 << 10

func (s *Server) origin() string { return s.base.Scheme + "://" + s.base.Host }
