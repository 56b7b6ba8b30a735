package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// exerciseRules checks standing rules: ids, what is kept, expiry on their
// own, revoking, and counting uses.
func exerciseRules(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("RulesRoundTripInIDOrder", func(t *testing.T) { checkRulesRoundTrip(t, setup(t)) })
	t.Run("RulesExpireOnTheirOwn", func(t *testing.T) { checkRulesExpire(t, setup(t)) })
	t.Run("RevokedRulesAreGone", func(t *testing.T) { checkRulesRevoke(t, setup(t)) })
	t.Run("RuleUsesAreAllCounted", func(t *testing.T) { checkRuleUses(t, setup(t)) })
	t.Run("LiveRulesAreCapped", func(t *testing.T) { checkRulesCapped(t, setup(t)) })
	t.Run("RecentAsksNewestFirstAndBounded", func(t *testing.T) { checkRecentAsks(t, setup(t)) })
}

func checkRecentAsks(t *testing.T, s store.Store) {
	ctx := context.Background()
	if got, err := s.RecentAsks(ctx, 20); err != nil || len(got) != 0 {
		t.Fatalf("RecentAsks on an empty store = %+v, %v", got, err)
	}
	for i := range store.MaxRecentAsks + 5 {
		a := asktype.RecentAsk{CallID: fmt.Sprint("c", i), At: t0.Add(time.Duration(i) * time.Second), Tool: "Bash",
			Command: fmt.Sprint("npm test ", i), Repo: "web", Caller: "ci"}
		if err := s.NoteAsk(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RecentAsks(ctx, 3)
	if err != nil || len(got) != 3 || got[0].CallID != fmt.Sprint("c", store.MaxRecentAsks+4) || got[2].CallID != fmt.Sprint("c", store.MaxRecentAsks+2) {
		t.Fatalf("RecentAsks(3) = %+v, %v; want the newest three, newest first", got, err)
	}
	if g := got[0]; g.Command != fmt.Sprint("npm test ", store.MaxRecentAsks+4) || g.Tool != "Bash" || g.Repo != "web" || g.Caller != "ci" ||
		!g.At.Equal(t0.Add(time.Duration(store.MaxRecentAsks+4)*time.Second)) {
		t.Fatalf("fields lost: %+v", g)
	}
	all, _ := s.RecentAsks(ctx, 10*store.MaxRecentAsks)
	if len(all) != store.MaxRecentAsks || all[len(all)-1].CallID != "c5" {
		t.Fatalf("kept %d, oldest %+v; want the latest %d", len(all), all[len(all)-1], store.MaxRecentAsks)
	}
}

// ExerciseRulesShared checks that a revoke through one replica holds on
// another at once: shared returns two stores on one state.
func ExerciseRulesShared(t *testing.T, shared func(t *testing.T) (a, b store.Store)) {
	t.Run("RevokeOnOneReplicaHoldsOnTheOther", func(t *testing.T) {
		t.Parallel()
		a, b := shared(t)
		ctx := context.Background()
		r := mustAddRule(t, a, rule("npm test *", time.Time{}))
		if live, err := b.LiveRules(ctx, t0); err != nil || len(live) != 1 || live[0].ID != r.ID {
			t.Fatalf("b.LiveRules = %+v, %v; want the rule a added", live, err)
		}
		if _, err := b.UseRule(ctx, r.ID, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := a.RevokeRule(ctx, r.ID, t0); err != nil {
			t.Fatal(err)
		}
		if live, err := b.LiveRules(ctx, t0); err != nil || len(live) != 0 {
			t.Fatalf("b.LiveRules after a revoked = %+v, %v; want none", live, err)
		}
		if _, err := b.UseRule(ctx, r.ID, t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("b.UseRule of a revoked rule = %v, want ErrNotFound", err)
		}
	})
}

func rule(cmd string, until time.Time) asktype.Rule {
	return asktype.Rule{Effect: "allow", Tool: "Bash", Command: cmd, Repo: "web", Caller: "ci",
		GrantedBy: "U0ALICE", GrantedByName: "alice", FromCall: "c1", Granted: t0, Until: until}
}

func mustAddRule(t *testing.T, s store.Store, r asktype.Rule) asktype.Rule {
	t.Helper()
	got, err := s.AddRule(context.Background(), r, t0)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sameRule(a, b asktype.Rule) bool {
	return a.ID == b.ID && a.Effect == b.Effect && a.Tool == b.Tool && a.Command == b.Command && a.Path == b.Path &&
		a.Repo == b.Repo && a.Caller == b.Caller && a.GrantedBy == b.GrantedBy && a.GrantedByName == b.GrantedByName &&
		a.Admin == b.Admin && a.FromCall == b.FromCall && a.Granted.Equal(b.Granted) && a.Until.Equal(b.Until) &&
		a.Uses == b.Uses && a.LastUsed.Equal(b.LastUsed)
}

func checkRulesRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	if live, err := s.LiveRules(ctx, t0); err != nil || len(live) != 0 {
		t.Fatalf("LiveRules on an empty store = %+v, %v", live, err)
	}
	// The longest-lasting first, so an order by expiry would show.
	a := mustAddRule(t, s, rule("npm test *", time.Time{}))
	p := rule("", t0.Add(8*time.Hour))
	p.Tool, p.Path, p.Effect, p.Repo, p.Caller, p.Admin = "Edit", "src/**", "deny", "", "", true
	b := mustAddRule(t, s, p)
	c := mustAddRule(t, s, rule("go test ./...", t0.Add(time.Hour)))
	if a.ID <= 0 || b.ID <= a.ID || c.ID <= b.ID {
		t.Fatalf("ids %d, %d, %d: want increasing from 1", a.ID, b.ID, c.ID)
	}
	want := []asktype.Rule{a, b, c}
	live, err := s.LiveRules(ctx, t0)
	if err != nil || len(live) != 3 {
		t.Fatalf("LiveRules = %+v, %v", live, err)
	}
	for i := range want {
		if !sameRule(live[i], want[i]) {
			t.Fatalf("LiveRules[%d] = %+v, want %+v", i, live[i], want[i])
		}
	}
	if live[1].Path != "src/**" || live[1].Effect != "deny" || !live[1].Admin || live[0].Uses != 0 {
		t.Fatalf("fields lost: %+v", live)
	}
}

func checkRulesExpire(t *testing.T, s store.Store) {
	ctx := context.Background()
	short := mustAddRule(t, s, rule("npm test *", t0.Add(time.Hour)))
	long := mustAddRule(t, s, rule("go test *", time.Time{}))
	ids := func(now time.Time) string {
		live, err := s.LiveRules(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, r := range live {
			out += fmt.Sprint(r.ID, " ")
		}
		return out
	}
	both, one := fmt.Sprint(short.ID, " ", long.ID, " "), fmt.Sprint(long.ID, " ")
	if got := ids(t0.Add(time.Hour - time.Millisecond)); got != both {
		t.Fatalf("a millisecond before its end: %q, want %q", got, both)
	}
	// At its Until a rule answers nothing more: use and revoke find it gone.
	if _, err := s.UseRule(ctx, short.ID, t0.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UseRule at its end = %v, want ErrNotFound", err)
	}
	if got := ids(t0.Add(time.Hour)); got != one {
		t.Fatalf("at its end: %q, want %q", got, one)
	}
	if _, err := s.RevokeRule(ctx, short.ID, t0.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RevokeRule after its end = %v, want ErrNotFound", err)
	}
	if got := ids(t0.Add(1000 * time.Hour)); got != one {
		t.Fatalf("until revoked lasts: %q, want %q", got, one)
	}
}

func checkRulesRevoke(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := mustAddRule(t, s, rule("npm test *", time.Time{}))
	b := mustAddRule(t, s, rule("go test *", time.Time{}))
	if _, err := s.UseRule(ctx, a.ID, t0); err != nil {
		t.Fatal(err)
	}
	got, err := s.RevokeRule(ctx, a.ID, t0)
	if err != nil || got.ID != a.ID || got.Command != "npm test *" || got.Uses != 1 {
		t.Fatalf("RevokeRule = %+v, %v; want the rule as it was, one use", got, err)
	}
	if live, _ := s.LiveRules(ctx, t0); len(live) != 1 || live[0].ID != b.ID {
		t.Fatalf("LiveRules after revoke = %+v", live)
	}
	if _, err := s.RevokeRule(ctx, a.ID, t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second revoke = %v, want ErrNotFound", err)
	}
	if _, err := s.UseRule(ctx, a.ID, t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UseRule after revoke = %v, want ErrNotFound", err)
	}
	if _, err := s.RevokeRule(ctx, 9999, t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking an unknown id = %v, want ErrNotFound", err)
	}
	// Ids are never reused.
	if c := mustAddRule(t, s, rule("make", time.Time{})); c.ID <= b.ID {
		t.Fatalf("new id %d after %d", c.ID, b.ID)
	}
}

func checkRuleUses(t *testing.T, s store.Store) {
	ctx := context.Background()
	r := mustAddRule(t, s, rule("npm test *", time.Time{}))
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.UseRule(ctx, r.ID, t0.Add(time.Duration(i+1)*time.Second)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := s.UseRule(ctx, r.ID, t0.Add(time.Hour))
	if err != nil || got.Uses != n+1 || !got.LastUsed.Equal(t0.Add(time.Hour)) {
		t.Fatalf("UseRule = %+v, %v; want %d uses, last at +1h", got, err, n+1)
	}
	if live, _ := s.LiveRules(ctx, t0.Add(time.Hour)); len(live) != 1 || live[0].Uses != n+1 || !live[0].LastUsed.Equal(t0.Add(time.Hour)) {
		t.Fatalf("LiveRules = %+v", live)
	}
}

func checkRulesCapped(t *testing.T, s store.Store) {
	ctx := context.Background()
	var last asktype.Rule
	for i := range store.MaxRules {
		last = mustAddRule(t, s, rule(fmt.Sprint("cmd", i), t0.Add(time.Hour)))
	}
	if _, err := s.AddRule(ctx, rule("one more", time.Time{}), t0); !errors.Is(err, store.ErrTooManyRules) {
		t.Fatalf("AddRule past the cap = %v, want ErrTooManyRules", err)
	}
	if _, err := s.RevokeRule(ctx, last.ID, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddRule(ctx, rule("one more", time.Time{}), t0); err != nil {
		t.Fatalf("AddRule after a revoke = %v", err)
	}
	// Rules that ran out make room on their own.
	if _, err := s.AddRule(ctx, rule("later", time.Time{}), t0.Add(time.Hour)); err != nil {
		t.Fatalf("AddRule once the others ran out = %v", err)
	}
}
