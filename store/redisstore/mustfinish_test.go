package redisstore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// Redis forgets its scripts when it fails over or restarts, so a pipeline's
// EVALSHA can meet NOSCRIPT: Redis then runs the pipeline's other commands
// (the index writes next to the script) and not the script. If the caller
// goes away at that moment, what the pipeline wrote must still be completed
// by the script, and what follows a script that ran must still be done:
// each row cancels the caller's ctx at the worst moment and checks that the
// transition reports success and left nothing half done.
func TestRedisTransitionsFinishWhenTheCallerGoesAtTheWorstMoment(t *testing.T) {
	t.Parallel()
	type moment int
	const (
		afterNoScript moment = iota // the pipeline met NOSCRIPT: its index writes ran, its script did not
		afterScript                 // the script ran: what follows it has not
	)
	// setup prepares the ask; act runs the transition under ctx and
	// checks what it returned; check reads what it left (with bg).
	type row struct {
		name  string
		at    moment
		setup func(t *testing.T, r *Store)
		act   func(t *testing.T, ctx context.Context, r *Store)
		check func(t *testing.T, r *Store)
	}
	bg := context.Background()
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	create := func(wait time.Duration) func(t *testing.T, r *Store) {
		return func(t *testing.T, r *Store) {
			_, _, err := r.Create(bg, rask("c1", "s1", wait))
			must(t, err)
		}
	}
	settled := func(t *testing.T, r *Store) {
		create(0)(t, r)
		_, err := r.Settle(bg, "c1", json.RawMessage(`{}`), rt0)
		must(t, err)
	}
	counts := func(t *testing.T, r *Store, want store.Counts) {
		t.Helper()
		if c, err := r.Counts(bg); err != nil || c != want {
			t.Fatalf("Counts = %+v, %v; want %+v", c, err, want)
		}
	}
	state := func(t *testing.T, r *Store, want asktype.State) *asktype.Ask {
		t.Helper()
		a, err := r.Get(bg, "c1")
		if err != nil || a.State != want {
			t.Fatalf("Get = %+v, %v; want %s", a, err, want)
		}
		return a
	}
	stale := func(t *testing.T, r *Store, want bool) {
		t.Helper()
		_, err := r.rdb.ZScore(bg, r.k.stale(), "c1").Result()
		if got := err == nil; got != want {
			t.Fatalf("in the stale index: %v (%v); want %v", got, err, want)
		}
	}
	// behind makes the record newer than what FinishPost or MarkRendered shows.
	behind := func(t *testing.T, r *Store) {
		create(time.Hour)(t, r)
		_, err := r.SetMessage(bg, "c1", asktype.MessageRef{Conversation: "C1", ID: "1.0"})
		must(t, err)
	}
	rows := []row{
		{name: "Create/new", at: afterNoScript,
			act: func(t *testing.T, ctx context.Context, r *Store) {
				if a, created, err := r.Create(ctx, rask("c1", "s1", time.Hour)); err != nil || !created || a.State != asktype.Open {
					t.Fatalf("Create = %+v %v %v", a, created, err)
				}
			},
			check: func(t *testing.T, r *Store) {
				state(t, r, asktype.Open)
				counts(t, r, store.Counts{Open: 1, TimedOpen: 1})
			}},
		{name: "Create/re-sent answered", at: afterNoScript, setup: settled,
			act: func(t *testing.T, ctx context.Context, r *Store) {
				if a, created, err := r.Create(ctx, rask("c1", "s1", 0)); err != nil || created || a.State != asktype.Settled {
					t.Fatalf("re-Create = %+v %v %v", a, created, err)
				}
			},
			check: func(t *testing.T, r *Store) { counts(t, r, store.Counts{}) }},
		{name: "Create/re-sent answered", at: afterScript, setup: settled,
			act: func(t *testing.T, ctx context.Context, r *Store) {
				if a, created, err := r.Create(ctx, rask("c1", "s1", 0)); err != nil || created || a.State != asktype.Settled {
					t.Fatalf("re-Create = %+v %v %v", a, created, err)
				}
			},
			check: func(t *testing.T, r *Store) { counts(t, r, store.Counts{}) }},
		{name: "Settle", at: afterNoScript, setup: create(time.Hour),
			act: func(t *testing.T, ctx context.Context, r *Store) {
				if a, err := r.Settle(ctx, "c1", json.RawMessage(`{}`), rt0); err != nil || a.State != asktype.Settled {
					t.Fatalf("Settle = %+v %v", a, err)
				}
			},
			check: func(t *testing.T, r *Store) {
				state(t, r, asktype.Settled)
				counts(t, r, store.Counts{})
			}},
		{name: "Settle/late", at: afterScript, setup: create(time.Hour),
			act: func(t *testing.T, ctx context.Context, r *Store) {
				if a, err := r.Settle(ctx, "c1", json.RawMessage(`{}`), rt0.Add(time.Hour)); !errors.Is(err, store.ErrContinued) || a.State != asktype.Continued {
					t.Fatalf("late Settle = %+v %v", a, err)
				}
			},
			check: func(t *testing.T, r *Store) {
				state(t, r, asktype.Continued)
				counts(t, r, store.Counts{Continued: 1})
			}},
		{name: "Expire", at: afterScript, setup: create(time.Hour),
			act: func(t *testing.T, ctx context.Context, r *Store) {
				if a, err := r.Expire(ctx, "c1", rt0.Add(time.Hour)); err != nil || a.State != asktype.Continued {
					t.Fatalf("Expire = %+v %v", a, err)
				}
			},
			check: func(t *testing.T, r *Store) { counts(t, r, store.Counts{Continued: 1}) }},
		{name: "FinishPost", at: afterNoScript, setup: create(time.Hour),
			act: func(t *testing.T, ctx context.Context, r *Store) {
				if a, err := r.FinishPost(ctx, "c1", "me", asktype.MessageRef{Conversation: "C1", ID: "1.1"}, 1); err != nil || a.Message.ID != "1.1" {
					t.Fatalf("FinishPost = %+v %v", a, err)
				}
			},
			check: func(t *testing.T, r *Store) {
				if a := state(t, r, asktype.Open); a.Message.ID != "1.1" || a.Rendered != a.Version {
					t.Fatalf("after FinishPost: %+v", a)
				}
				stale(t, r, false)
			}},
		{name: "FinishPost/behind", at: afterScript, setup: behind,
			act: func(t *testing.T, ctx context.Context, r *Store) {
				// A second message: kept beside the one recorded, behind.
				if a, err := r.FinishPost(ctx, "c1", "me", asktype.MessageRef{Conversation: "C1", ID: "1.1"}, 1); err != nil || !a.Message.Shows("C1", "1.1") {
					t.Fatalf("FinishPost = %+v %v", a, err)
				}
			},
			check: func(t *testing.T, r *Store) { stale(t, r, true) }},
		{name: "MarkRendered", at: afterNoScript, setup: create(time.Hour),
			act: func(t *testing.T, ctx context.Context, r *Store) {
				if up, err := r.MarkRendered(ctx, "c1", 1); err != nil || !up {
					t.Fatalf("MarkRendered = %v %v", up, err)
				}
			},
			check: func(t *testing.T, r *Store) {
				if a := state(t, r, asktype.Open); a.Rendered != 1 {
					t.Fatalf("rendered %d, want 1", a.Rendered)
				}
				stale(t, r, false)
			}},
		{name: "MarkRendered/behind", at: afterScript, setup: behind,
			act: func(t *testing.T, ctx context.Context, r *Store) {
				if up, err := r.MarkRendered(ctx, "c1", 1); err != nil || up {
					t.Fatalf("MarkRendered = %v %v; want behind, no error", up, err)
				}
			},
			check: func(t *testing.T, r *Store) { stale(t, r, true) }},
		{name: "ClaimWaits", at: afterNoScript, setup: create(time.Hour),
			act: func(t *testing.T, ctx context.Context, r *Store) {
				if got, err := r.ClaimWaits(ctx, []string{"c1"}, store.Hold{Holder: "me", TTL: time.Minute, Now: rt0}); err != nil || !got[0].Held {
					t.Fatalf("ClaimWaits = %+v %v", got, err)
				}
			},
			check: func(t *testing.T, r *Store) {
				if h, err := r.Acquire(bg, "c1", store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "other", TTL: time.Minute, Now: rt0}}); !errors.Is(err, store.ErrHeld) || h != "me" {
					t.Fatalf("another holder's Acquire = %q %v; want held by me", h, err)
				}
			}},
	}
	for _, tt := range rows {
		name := tt.name + map[moment]string{afterNoScript: " after NOSCRIPT", afterScript: " after the script"}[tt.at]
		t.Run(name, func(t *testing.T) {
			r, rdb := newTestRedis(t, Options{})
			if tt.setup != nil {
				tt.setup(t, r)
			}
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			h := &interfere{noScript: tt.at == afterNoScript, cancel: cancel}
			rdb.AddHook(h)
			tt.act(t, ctx, r)
			if !h.fired.Load() {
				t.Fatal("the caller was never cancelled: the row tests nothing")
			}
			tt.check(t, r)
		})
	}
}

// interfere plays Redis losing its scripts and a caller going away. With
// noScript, the first pipeline that sends a transition script by its hash
// names an unknown hash instead, so Redis answers NOSCRIPT for it and runs
// the rest of the pipeline, as after a failover; cancel runs when that
// pipeline returns. Without noScript, cancel runs when a transition script
// has run (in a pipeline or alone).
type interfere struct {
	noScript bool
	cancel   context.CancelFunc
	fired    atomic.Bool
}

func (*interfere) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *interfere) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if !h.noScript && cmd.Err() == nil && isTransitionScript(cmd) && !h.fired.Swap(true) {
			h.cancel()
		}
		return err
	}
}

func (h *interfere) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !h.noScript {
			err := next(ctx, cmds)
			for _, c := range cmds {
				if c.Err() == nil && isTransitionScript(c) && !h.fired.Swap(true) {
					h.cancel()
				}
			}
			return err
		}
		if h.fired.Load() {
			return next(ctx, cmds)
		}
		sent := make([]redis.Cmder, len(cmds))
		var lost []int
		for i, c := range cmds {
			sent[i] = c
			if c.Name() == "evalsha" && isTransitionScript(c) {
				args := append([]any(nil), c.Args()...)
				args[1] = strings.Repeat("0", 40) // a script Redis does not know
				sent[i] = redis.NewCmd(ctx, args...)
				lost = append(lost, i)
			}
		}
		if len(lost) == 0 {
			return next(ctx, cmds)
		}
		err := next(ctx, sent)
		for _, i := range lost {
			cmds[i].SetErr(sent[i].Err())
		}
		h.fired.Store(true)
		h.cancel()
		return err
	}
}

// transitionScripts are every script whose run is a transition (not the
// pipelines' extendTTL helper).
var transitionScripts = []*redis.Script{createScript, settleScript, expireScript, abortScript, queueReplyScript,
	continueScript, ackReplyScript, setMessageScript, refuseScript, markRenderedScript, finishPostScript, claimWaitScript,
	beginPostScript, acquireScript, releaseScript}

// isTransitionScript reports whether cmd runs one of transitionScripts,
// by hash (EVALSHA) or whole (EVAL).
func isTransitionScript(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 2 {
		return false
	}
	s, _ := args[1].(string)
	switch cmd.Name() {
	case "evalsha":
	case "eval":
		sum := sha1.Sum([]byte(s))
		s = hex.EncodeToString(sum[:])
	default:
		return false
	}
	for _, t := range transitionScripts {
		if t.Hash() == s {
			return true
		}
	}
	return false
}
