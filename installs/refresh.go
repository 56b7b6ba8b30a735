package installs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/askslack/askslack/internal/backoff"
	"github.com/askslack/askslack/internal/startstop"
	"github.com/askslack/askslack/store"
)

// Refresher keeps rotating tokens (https://docs.slack.dev/authentication/using-token-rotation)
// working: halfway through a token's life one replica — the one holding
// the installation's refresh lease (a store.Notes key every replica sees)
// — exchanges its refresh token and stores the new pair before it lets the
// lease go. Every replica reads the new token within the Keeper's Fresh,
// and at once when Slack refuses the old one (Transport), so none is left
// on a token that stopped working. A refresh that fails is retried with
// internal/backoff's policy, logged at ERROR and counted (Failed), while the
// current token, which still works until it expires, stays in use.
type Refresher struct {
	Keeper *Keeper
	Slack  Slack
	Leases store.Notes
	Holder string
	Now    func() time.Time
	Log    *slog.Logger
	// Failed and Refreshed are told of each attempt (metrics).
	Failed    func(key string, err error)
	Refreshed func(key string)

	life    startstop.Base
	retries map[string]retry // this replica's failed attempts, by key
}

type retry struct {
	n  int
	at time.Time
}

// refreshLease is how long one replica may take to refresh a token before
// another may try.
const refreshLease = time.Minute

var refreshBackoff = backoff.Policy{Base: 2 * time.Second, Max: 2 * time.Minute}

// Start runs the refresher until Stop.
func (r *Refresher) Start(ctx context.Context) error {
	r.retries = map[string]retry{}
	return r.life.Launch(ctx, nil, r.run)
}

// Stop ends it.
func (r *Refresher) Stop(ctx context.Context) error { return r.life.Halt(ctx, nil) }

func (r *Refresher) run(ctx context.Context) {
	for {
		wait := r.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		case <-r.Keeper.Saved():
		}
	}
}

// pass refreshes what is due and returns how long to wait for the next:
// a minute at most, so an installation another replica made is seen
// within one (a token is due halfway through its life, hours for Slack's).
func (r *Refresher) pass(ctx context.Context) time.Duration {
	next := time.Minute
	all, err := r.Keeper.All(ctx)
	if err != nil {
		r.Log.Warn("cannot read the installations to refresh their tokens", "err", err)
		return 5 * time.Second
	}
	now := r.Now()
	for _, in := range all {
		if in.Expires.IsZero() || in.Refresh == "" {
			continue
		}
		due := dueAt(in)
		if rt, ok := r.retries[in.Key()]; ok && rt.at.After(due) {
			due = rt.at
		}
		if due.After(now) {
			next = min(next, due.Sub(now))
			continue
		}
		if err := r.refresh(ctx, in.Key()); err != nil {
			rt := r.retries[in.Key()]
			rt.n++
			rt.at = now.Add(refreshBackoff.Delay(rt.n, 0))
			r.retries[in.Key()] = rt
			left := in.Expires.Sub(now).Round(time.Second)
			r.Log.Error("a rotating Slack token could not be refreshed; retrying", "key", in.Key(), "attempt", rt.n, "expiresIn", left, "err", err)
			if r.Failed != nil {
				r.Failed(in.Key(), err)
			}
			next = min(next, rt.at.Sub(now))
			continue
		}
		delete(r.retries, in.Key())
	}
	return max(next, 100*time.Millisecond)
}

// dueAt is halfway through the token's life: Slack's tokens last 12 h, so
// there are 6 h left to refresh in, and a test's 20 s tokens get 10 s.
func dueAt(in Installation) time.Time {
	from := in.Refreshed
	if from.IsZero() {
		from = in.Installed
	}
	if from.IsZero() || !from.Before(in.Expires) {
		return in.Expires.Add(-time.Hour)
	}
	return from.Add(in.Expires.Sub(from) / 2)
}

// refresh refreshes key's token under its lease; it does nothing when
// another replica holds the lease or already refreshed.
func (r *Refresher) refresh(ctx context.Context, key string) error {
	lk := "install:refresh:" + key
	won, err := r.Leases.Remember(ctx, lk, r.Holder, refreshLease, r.Now())
	if err != nil {
		return err
	}
	if won != r.Holder {
		return nil
	}
	defer func() {
		if _, err := r.Leases.Forget(context.WithoutCancel(ctx), lk, r.Now()); err != nil {
			r.Log.Warn("the refresh lease was not let go; it ends by itself", "key", key, "err", err)
		}
	}()
	in, err := r.Keeper.Get(ctx, key) // the store's, not the snapshot's: another replica may have refreshed
	if err != nil {
		return err
	}
	if dueAt(in).After(r.Now()) {
		return nil
	}
	g, err := r.Slack.Refresh(ctx, in.Refresh)
	if err != nil {
		return fmt.Errorf("oauth.v2.access (refresh_token): %w", err)
	}
	in.BotToken, in.Refresh, in.Expires, in.Refreshed = g.Token, g.Refresh, g.Expires, r.Now()
	if err := r.Keeper.Save(ctx, in); err != nil {
		// The new pair is lost with this error; the old refresh token
		// may be spent. Said loudly: the operator reinstalls if it is.
		return fmt.Errorf("a refreshed token could not be stored: %w", err)
	}
	r.Log.Info("refreshed a rotating Slack token", "key", key, "expires", in.Expires)
	if r.Refreshed != nil {
		r.Refreshed(key)
	}
	return nil
}
