package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/kit/testredis"
)

// splitHook runs the first pipeline that carries script in two parts,
// once inject is set, with inject in between: before the script's
// command, or right after it.
// That is what another replica's transition landing in the middle of this
// replica's pipeline looks like (a pipeline is not a transaction).
type splitHook struct {
	script *redis.Script
	after  bool
	inject func()
	once   sync.Once
}

func (h *splitHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *splitHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *splitHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		i := slices.IndexFunc(cmds, func(c redis.Cmder) bool {
			return c.Name() == "evalsha" && len(c.Args()) > 1 && c.Args()[1] == h.script.Hash()
		})
		if i < 0 || h.inject == nil {
			return next(ctx, cmds)
		}
		if h.after {
			i++
		}
		split := false
		h.once.Do(func() { split = true })
		if !split {
			return next(ctx, cmds)
		}
		var err error
		if i > 0 {
			err = next(ctx, cmds[:i])
		}
		h.inject()
		if i < len(cmds) {
			err = errors.Join(err, next(ctx, cmds[i:]))
		}
		return err
	}
}

// An ask that another replica settles while this one records its message
// or marks it rendered stays on the stale index until its message shows
// the settlement, wherever the settle lands in this replica's pipeline: the
// settling replica may die before it renders (SIGKILL), and then the index
// is how any other replica's sweep finds the message with live buttons.
// (The pipelines ran the script, then took the ask off the index: a settle
// landing between them was dropped from the index while the script had
// said the message was caught up.)
func TestRedisSettleInsideAPipelineKeepsTheAskStale(t *testing.T) {
	t.Parallel()
	type step func(ctx context.Context, r *Store, ref asktype.MessageRef) error
	steps := map[string]struct {
		script *redis.Script
		run    step
	}{
		// The post's reply names the message a click adopted: the
		// adoption is all that happened when the script runs.
		"FinishPost": {finishPostScript, func(ctx context.Context, r *Store, ref asktype.MessageRef) error {
			_, err := r.FinishPost(ctx, "c1", "poster", ref, 1)
			return err
		}},
		// The click's render of the adopted, open ask.
		"MarkRendered": {markRenderedScript, func(ctx context.Context, r *Store, ref asktype.MessageRef) error {
			_, err := r.MarkRendered(ctx, "c1", 2)
			return err
		}},
	}
	for name, s := range steps {
		for _, after := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "/SettleBeforeTheScript", true: "/SettleAfterTheScript"}[after], func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				rdb, prefix := testredis.Client(t)
				other, _ := newStoreOn(t, rdb, prefix, Options{})
				hookedClient, _ := testredis.Client(t)
				hook := &splitHook{script: s.script, after: after}
				hookedClient.AddHook(hook)
				r, _ := newStoreOn(t, hookedClient, prefix, Options{})

				a := rask("c1", "s1", 0)
				a.Poster = asktype.PostLease{Holder: "poster", Until: time.Now().Add(time.Minute)}
				if _, _, err := r.Create(ctx, a); err != nil {
					t.Fatal(err)
				}
				ref := asktype.MessageRef{Surface: "slack", Conversation: "C1", ID: "1.1"}
				if _, err := r.FinishPost(ctx, "c1", asktype.Adopted, ref, 0); err != nil {
					t.Fatal(err)
				}
				hook.inject = func() {
					// Another replica settles the ask; it dies before it
					// renders, so it never marks anything rendered.
					s, _ := json.Marshal(map[string]string{"by": "U1"})
					if _, err := other.Settle(ctx, "c1", s, time.Now()); err != nil {
						t.Error(err)
					}
				}
				if err := s.run(ctx, r, ref); err != nil {
					t.Fatal(err)
				}
				cur, err := r.Get(ctx, "c1")
				if err != nil {
					t.Fatal(err)
				}
				if cur.State != asktype.Settled || cur.Rendered >= cur.Version {
					t.Fatalf("ask = %s, rendered %d of %d; want settled and behind (nobody rendered the settlement)", cur.State, cur.Rendered, cur.Version)
				}
				ids, err := r.Stale(ctx, time.Now().Add(time.Hour), 10)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(ids, "c1") {
					t.Fatalf("stale index = %v; the settled ask whose message still has live buttons is not on it, so no sweep will ever fix it", ids)
				}
			})
		}
	}
}
