package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/tokens"
	"github.com/askslack/askslack/waterfall"
)

// Devices is what the page asks of askslack login (tokens.Service): the
// codes people confirm on /app/device, and the tokens operators see and
// revoke in the console.
type Devices interface {
	MayConnect(ctx context.Context, userID string) (bool, string)
	Lookup(ctx context.Context, typed, userID, addr string) (tokens.Pending, error)
	Approve(ctx context.Context, typed string, who tokens.Who, addr string) (asktype.AgentToken, error)
	Deny(ctx context.Context, typed string, who tokens.Who, addr string) error
	List(ctx context.Context, owner string) ([]asktype.AgentToken, error)
	Revoke(ctx context.Context, id string, who tokens.Who, owner string) (asktype.AgentToken, int, error)
}

// DevicePath is the page a person confirms a login on.
const DevicePath = "/app/device"

type devicePage struct {
	page
	// Code is the code asked about, as typed; Pending what it would
	// connect (nil until a code is found).
	Code    string
	Pending *tokens.Pending
	// Problem says why the code cannot be confirmed; NotAllowed why this
	// person may not connect agents at all.
	Problem    string
	NotAllowed string
	// Done is the outcome of a confirmation: the token connected, or a
	// denial.
	Connected *asktype.AgentToken
	Denied    bool
	Now       time.Time
}

func addrOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *Server) whoIs(sess *session) tokens.Who {
	return tokens.Who{UserID: sess.User, UserName: sess.Name, Team: sess.Team, Surface: waterfall.SurfaceWeb}
}

// device is GET /app/device[?code=…]: sign in, type the code (or follow
// the link the terminal printed), see what asks to connect, confirm.
func (s *Server) device(w http.ResponseWriter, r *http.Request) {
	if s.opts.Devices == nil {
		s.fail(w, r, http.StatusNotFound, "This bot does not connect agents with askslack login.")
		return
	}
	sess, out := s.current(r)
	if sess == nil {
		s.render(w, r, http.StatusUnauthorized, "signin", signinPage{Why: out.why, Next: r.URL.RequestURI(),
			Heading: "Connect an agent", Lead: "Sign in with your Slack account to see what is asking to connect, and to confirm it."})
		return
	}
	d := devicePage{page: s.pageFor(sess, "Connect an agent"), Code: strings.TrimSpace(r.URL.Query().Get("code")), Now: s.clock.Now()}
	if ok, why := s.opts.Devices.MayConnect(r.Context(), sess.User); !ok {
		d.NotAllowed = why
		s.m.Web("device", "refused")
		s.render(w, r, http.StatusForbidden, "device", d)
		return
	}
	if d.Code == "" {
		s.render(w, r, http.StatusOK, "device", d)
		return
	}
	p, err := s.opts.Devices.Lookup(r.Context(), d.Code, sess.User, addrOf(r))
	if status := s.deviceProblem(&d, err); status != 0 {
		s.render(w, r, status, "device", d)
		return
	}
	d.Pending = &p
	s.render(w, r, http.StatusOK, "device", d)
}

// deviceProblem words a code's error on d and returns its status (0 for
// none).
func (s *Server) deviceProblem(d *devicePage, err error) int {
	code := d.Code
	if c, ok := tokens.NormalCode(code); ok {
		code = tokens.ShowCode(c)
	}
	var na *tokens.NotAllowed
	switch {
	case err == nil:
		return 0
	case errors.As(err, &na):
		d.NotAllowed = na.Why
		s.m.Web("device", "refused")
		return http.StatusForbidden
	case errors.Is(err, tokens.ErrNoSuchCode):
		d.Problem = fmt.Sprintf("No login is waiting for the code %s. Check it against your terminal: it is eight letters, such as WDJB-MJHT.", code)
		s.m.Web("device", "invalid")
		return http.StatusNotFound
	case errors.Is(err, tokens.ErrCodeUsed):
		d.Problem = fmt.Sprintf("The code %s was already used: it connects one agent, once. If that was not you, look at your connected agents in the bot's App Home (or /askslack agents) and revoke what you do not know. To connect again, run askslack login.", code)
		s.m.Web("device", "invalid")
		return http.StatusConflict
	case errors.Is(err, tokens.ErrCodeExpired):
		d.Problem = fmt.Sprintf("The code %s has expired (a code lasts 10 minutes). Run askslack login again for a new one.", code)
		s.m.Web("device", "invalid")
		return http.StatusGone
	case errors.Is(err, tokens.ErrLimited):
		d.Problem = "Too many codes tried; wait a minute and try again."
		s.m.Web("device", "limited")
		return http.StatusTooManyRequests
	}
	s.log.Error("a login code could not be read", "err", err)
	d.Problem = "Codes cannot be read just now; try again in a minute."
	s.m.Web("device", "error")
	return http.StatusServiceUnavailable
}

// confirmDevice is POST /app/device: Connect or Deny, with the form's
// CSRF token, for the signed-in person.
func (s *Server) confirmDevice(w http.ResponseWriter, r *http.Request) {
	if s.opts.Devices == nil {
		s.fail(w, r, http.StatusNotFound, "This bot does not connect agents with askslack login.")
		return
	}
	sess := s.signedIn(w, r)
	if sess == nil || !s.checkPost(w, r, sess, "") {
		return
	}
	d := devicePage{page: s.pageFor(sess, "Connect an agent"), Code: strings.TrimSpace(r.PostFormValue("code")), Now: s.clock.Now()}
	ctx := r.Context()
	switch r.PostFormValue("action") {
	case "connect":
		t, err := s.opts.Devices.Approve(ctx, d.Code, s.whoIs(sess), addrOf(r))
		if status := s.deviceProblem(&d, err); status != 0 {
			s.render(w, r, status, "device", d)
			return
		}
		d.Connected = &t
		s.m.Web("device", "ok")
	case "deny":
		if status := s.deviceProblem(&d, s.opts.Devices.Deny(ctx, d.Code, s.whoIs(sess), addrOf(r))); status != 0 {
			s.render(w, r, status, "device", d)
			return
		}
		d.Denied = true
		s.m.Web("device", "denied")
	default:
		s.fail(w, r, http.StatusBadRequest, "Choose Connect or Deny.")
		return
	}
	s.render(w, r, http.StatusOK, "device", d)
}

// tokenView is a token as the console lists it.
type tokenView struct {
	asktype.AgentToken
	Caller string
}

// revokeToken is the console's Revoke of anyone's agent token, for its
// admins; their revoke is theirs in the audit trail.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	sess := s.signedIn(w, r)
	if sess == nil || !s.checkPost(w, r, sess, "") {
		return
	}
	if !sess.Admin || s.opts.Devices == nil {
		s.m.Web("revoke", "refused")
		s.fail(w, r, http.StatusForbidden, "Only the console's admins revoke other people's agent tokens; revoke your own in the bot's App Home.")
		return
	}
	if _, _, err := s.opts.Devices.Revoke(r.Context(), r.PathValue("id"), s.whoIs(sess), ""); err != nil {
		if errors.Is(err, tokens.ErrNotFound) {
			s.fail(w, r, http.StatusNotFound, "There is no such live agent token (it may have been revoked already).")
			return
		}
		s.log.Error("revoking an agent token from the web failed", "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "The token could not be revoked just now; try again.")
		return
	}
	s.m.Web("revoke", "ok")
	http.Redirect(w, r, Prefix+"console?m=token-revoked", http.StatusSeeOther)
}

// consoleTokens is the console's list of every live agent token.
func (s *Server) consoleTokens(ctx context.Context) ([]tokenView, error) {
	if s.opts.Devices == nil {
		return nil, nil
	}
	ts, err := s.opts.Devices.List(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]tokenView, 0, len(ts))
	for _, t := range ts {
		out = append(out, tokenView{AgentToken: t, Caller: tokens.CallerOf(t)})
	}
	return out, nil
}
