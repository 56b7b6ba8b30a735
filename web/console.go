package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// The console reads at most this much of the audit trail to verify its
// chain on one page load (the whole trail is `askslack audit verify`'s).
const (
	consoleAuditPage  = 1000
	consoleAuditPages = 50
	consoleAuditShown = 100
)

type consolePage struct {
	page
	Asks  []askView
	Chain chainReport
	Trail []asktype.AuditEntry
	Day   *waterfall.Stats
	Week  *waterfall.Stats
	Rules []ruleView
	// Tokens are every live personal agent token (askslack login); nil
	// when login is off.
	Tokens []tokenView
	Login  bool
	Flash  string
	Failed []string
	// CanRevoke: this admin may revoke rules (a rule admin, when they are named).
	CanRevoke bool
}

type chainReport struct {
	Holds        bool
	Count        int64
	First, Last  int64
	Head, Broken string
	Partial      bool
}

type ruleView struct {
	asktype.Rule
	Live bool
}

// console is the operators' page: every open ask across callers, the audit
// trail with its chain verified here, time to answer per agent and per
// person, and the standing rules with revoke.
func (s *Server) console(w http.ResponseWriter, r *http.Request) {
	sess := s.signedIn(w, r)
	if sess == nil {
		return
	}
	if !sess.Admin {
		s.fail(w, r, http.StatusForbidden, "The console is for rule admins (ASKSLACK_RULE_ADMINS, ASKSLACK_WEB_ADMINS).")
		return
	}
	ctx := r.Context()
	now := s.clock.Now()
	d := consolePage{page: s.pageFor(sess, "Console"), Flash: flashes[r.URL.Query().Get("m")], CanRevoke: s.mayRevoke(ctx, sess)}
	note := func(what string, err error) {
		s.log.Error("console: reading "+what+" failed", "err", err)
		d.Failed = append(d.Failed, what)
	}
	if recs, err := s.host.Active(ctx, scanAsks); err != nil {
		note("open asks", err)
	} else {
		for _, rec := range recs {
			d.Asks = append(d.Asks, summaryOf(rec))
		}
	}
	var err error
	if d.Chain, d.Trail, err = s.verifyTrail(ctx); err != nil {
		note("the audit trail", err)
	}
	for _, w := range []struct {
		into **waterfall.Stats
		span time.Duration
		what string
	}{{&d.Day, 24 * time.Hour, "the day's figures"}, {&d.Week, 7 * 24 * time.Hour, "the week's figures"}} {
		st, err := s.host.Stats(ctx, now.Add(-w.span))
		if err != nil {
			note(w.what, err)
			continue
		}
		*w.into = &st
	}
	if rules, err := s.host.Rules(ctx); err != nil && waterfall.CodeOf(err) != waterfall.CodeNotFound {
		note("standing rules", err)
	} else {
		for _, ru := range rules {
			d.Rules = append(d.Rules, ruleView{Rule: ru, Live: ru.Live(now)})
		}
	}
	d.Login = s.opts.Devices != nil
	if d.Tokens, err = s.consoleTokens(ctx); err != nil {
		note("agent tokens", err)
	}
	s.render(w, r, http.StatusOK, "console", d)
}

// verifyTrail walks the kept trail, page after page, through the chain
// verifier, and keeps the newest entries to show.
func (s *Server) verifyTrail(ctx context.Context) (chainReport, []asktype.AuditEntry, error) {
	var v store.ChainVerifier
	var rep chainReport
	var shown []asktype.AuditEntry
	cursor := ""
	for page := 0; ; page++ {
		if page == consoleAuditPages {
			rep.Partial = true
			break
		}
		entries, next, err := s.host.Audit(ctx, asktype.AuditQuery{Limit: consoleAuditPage, Cursor: cursor})
		if err != nil {
			return rep, nil, err
		}
		for i := range entries {
			if err := v.Next(&entries[i]); err != nil && rep.Broken == "" {
				var b *store.ChainBreak
				if errors.As(err, &b) {
					rep.Broken = err.Error()
				}
			}
		}
		shown = append(shown, entries...)
		if len(shown) > consoleAuditShown {
			shown = shown[len(shown)-consoleAuditShown:]
		}
		if next == "" || len(entries) == 0 {
			break
		}
		cursor = next
	}
	rep.Holds = rep.Broken == ""
	rep.Count, rep.First, rep.Last, rep.Head = v.Count, v.First, v.Last, v.Head
	// Newest first on the page.
	for i, j := 0, len(shown)-1; i < j; i, j = i+1, j-1 {
		shown[i], shown[j] = shown[j], shown[i]
	}
	return rep, shown, nil
}

// mayRevoke: the rule admins when they are named, else the console's admins.
func (s *Server) mayRevoke(ctx context.Context, sess *session) bool {
	if !sess.Admin {
		return false
	}
	if s.opts.RuleAdmins == nil {
		return true
	}
	ok, _ := s.opts.RuleAdmins.Allowed(ctx, sess.User, &waterfall.Request{})
	return ok
}

// revoke ends a standing rule, as the Slack Revoke button does, for an
// admin only; the revoke is the admin's in the audit trail.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	sess := s.signedIn(w, r)
	if sess == nil {
		return
	}
	if !s.checkPost(w, r, sess, "") {
		return
	}
	if !sess.Admin || !s.mayRevoke(r.Context(), sess) {
		s.m.Web("revoke", "refused")
		s.fail(w, r, http.StatusForbidden, "Only rule admins (ASKSLACK_RULE_ADMINS) may revoke standing rules.")
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		s.fail(w, r, http.StatusNotFound, "There is no such rule.")
		return
	}
	if _, err := s.host.RevokeRule(r.Context(), id, sess.respondent(s.clock.Now())); err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeNotFound {
			s.fail(w, r, http.StatusNotFound, "There is no such rule (it may have been revoked already).")
			return
		}
		s.log.Error("revoking a rule from the web failed", "rule", id, "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "The rule could not be revoked just now; try again.")
		return
	}
	s.m.Web("revoke", "ok")
	http.Redirect(w, r, Prefix+"console?m=revoked", http.StatusSeeOther)
}
