package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// exerciseTokens checks personal agent tokens: what is kept, finding one
// by its hash, recording uses, revoking once, expiry and the caps.
func exerciseTokens(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("TokensRoundTripNewestFirst", func(t *testing.T) { checkTokensRoundTrip(t, setup(t)) })
	t.Run("TokenIDsAndHashesAreUnique", func(t *testing.T) { checkTokensUnique(t, setup(t)) })
	t.Run("TokenUsesAreRecordedByTheMinuteAndAddress", func(t *testing.T) { checkTokenUses(t, setup(t)) })
	t.Run("RevokedTokensAreKeptNotLive", func(t *testing.T) { checkTokenRevoke(t, setup(t)) })
	t.Run("ATokenIsRevokedOnce", func(t *testing.T) { checkTokenRevokeOnce(t, setup(t)) })
	t.Run("TokensExpireAndAreDroppedLater", func(t *testing.T) { checkTokenExpiry(t, setup(t)) })
	t.Run("LiveTokensAreCappedPerOwner", func(t *testing.T) { checkTokensCapped(t, setup(t)) })
}

// agentToken is a token of owner made at t0 for 90 days.
func agentToken(id, owner string) asktype.AgentToken {
	return asktype.AgentToken{ID: id, Name: id + "-laptop", Owner: owner, OwnerName: "name of " + owner, Kinds: []string{"claude", "codex"},
		Hash: "hash-of-" + id, ConnectAddr: "192.0.2.1", Created: t0, Expires: t0.Add(90 * 24 * time.Hour)}
}

func mustAddToken(t *testing.T, s store.Store, tok asktype.AgentToken, now time.Time) {
	t.Helper()
	if err := s.AddToken(context.Background(), tok, now); err != nil {
		t.Fatalf("AddToken(%s) = %v", tok.ID, err)
	}
}

func tokenIDs(ts []asktype.AgentToken) []string {
	out := []string{}
	for _, x := range ts {
		out = append(out, x.ID)
	}
	return out
}

func checkTokensRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	if got, err := s.LiveTokens(ctx, "", t0); err != nil || len(got) != 0 {
		t.Fatalf("LiveTokens on an empty store = %+v, %v", got, err)
	}
	a := agentToken("at_a", "U0ALICE")
	mustAddToken(t, s, a, t0)
	b := agentToken("at_b", "U0BOB")
	b.Created = t0.Add(time.Second)
	mustAddToken(t, s, b, t0.Add(time.Second))
	c := agentToken("at_c", "U0ALICE")
	c.Created, c.Kinds = t0.Add(2*time.Second), nil
	mustAddToken(t, s, c, t0.Add(2*time.Second))

	got, err := s.Token(ctx, "at_a")
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("Token(at_a) = %+v, %v; want %+v", got, err, a)
	}
	if got, err := s.Token(ctx, "at_c"); err != nil || got.Kinds != nil {
		t.Fatalf("Token(at_c) = %+v, %v; want no kinds", got, err)
	}
	if _, err := s.Token(ctx, "at_none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Token of an unknown id = %v, want ErrNotFound", err)
	}
	now := t0.Add(time.Minute)
	if all, err := s.LiveTokens(ctx, "", now); err != nil || fmt.Sprint(tokenIDs(all)) != "[at_c at_b at_a]" {
		t.Fatalf("LiveTokens(all) = %v, %v; want newest first", tokenIDs(all), err)
	}
	if mine, err := s.LiveTokens(ctx, "U0ALICE", now); err != nil || fmt.Sprint(tokenIDs(mine)) != "[at_c at_a]" {
		t.Fatalf("LiveTokens(U0ALICE) = %v, %v", tokenIDs(mine), err)
	}
	if none, err := s.LiveTokens(ctx, "U0CAROL", now); err != nil || len(none) != 0 {
		t.Fatalf("LiveTokens(U0CAROL) = %v, %v; want none", tokenIDs(none), err)
	}
	used, err := s.UseToken(ctx, "hash-of-at_b", "198.51.100.7", now)
	if err != nil || used.ID != "at_b" || used.Owner != "U0BOB" || used.Name != "at_b-laptop" || !used.LastUsed.Equal(now) || used.LastAddr != "198.51.100.7" {
		t.Fatalf("UseToken(at_b's hash) = %+v, %v", used, err)
	}
	if _, err := s.UseToken(ctx, "hash-of-nobody", "198.51.100.7", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UseToken of an unknown hash = %v, want ErrNotFound", err)
	}
}

func checkTokensUnique(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustAddToken(t, s, agentToken("at_a", "U0ALICE"), t0)
	sameID := agentToken("at_a", "U0BOB")
	sameID.Hash = "another hash"
	if err := s.AddToken(ctx, sameID, t0); !errors.Is(err, store.ErrTokenExists) {
		t.Fatalf("AddToken with a kept id = %v, want ErrTokenExists", err)
	}
	sameHash := agentToken("at_other", "U0BOB")
	sameHash.Hash = "hash-of-at_a"
	if err := s.AddToken(ctx, sameHash, t0); !errors.Is(err, store.ErrTokenExists) {
		t.Fatalf("AddToken with a kept hash = %v, want ErrTokenExists", err)
	}
	if _, err := s.RevokeToken(ctx, "at_a", "U0ALICE", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.AddToken(ctx, sameID, t0); !errors.Is(err, store.ErrTokenExists) {
		t.Fatalf("AddToken with a revoked token's id = %v, want ErrTokenExists (ids are never reused)", err)
	}
	if got, err := s.UseToken(ctx, "hash-of-at_a", "", t0); err != nil || got.Owner != "U0ALICE" {
		t.Fatalf("the first token's hash finds %+v, %v; want alice's, untouched by the refused adds", got, err)
	}
}

func checkTokenUses(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustAddToken(t, s, agentToken("at_a", "U0ALICE"), t0)
	use := func(at time.Time, addr string) asktype.AgentToken {
		t.Helper()
		got, err := s.UseToken(ctx, "hash-of-at_a", addr, at)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := t0.Add(time.Second)
	if got := use(first, "192.0.2.1"); !got.LastUsed.Equal(first) || got.LastAddr != "192.0.2.1" {
		t.Fatalf("first use recorded as %v from %q", got.LastUsed, got.LastAddr)
	}
	if got := use(first.Add(10*time.Second), "192.0.2.1"); !got.LastUsed.Equal(first) {
		t.Fatalf("a use 10s later from the same address moved the record to %v; want it kept to the minute", got.LastUsed)
	}
	moved := first.Add(20 * time.Second)
	if got := use(moved, "203.0.113.9"); !got.LastUsed.Equal(moved) || got.LastAddr != "203.0.113.9" {
		t.Fatalf("a use from another address recorded as %v from %q", got.LastUsed, got.LastAddr)
	}
	later := moved.Add(store.TouchEvery)
	if got := use(later, "203.0.113.9"); !got.LastUsed.Equal(later) {
		t.Fatalf("a use a minute later recorded as %v", got.LastUsed)
	}
	if got, _ := s.Token(ctx, "at_a"); !got.LastUsed.Equal(later) || got.LastAddr != "203.0.113.9" {
		t.Fatalf("Token reads the last use as %v from %q", got.LastUsed, got.LastAddr)
	}
	// Concurrent uses from many places: the record names one of them.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.UseToken(ctx, "hash-of-at_a", fmt.Sprint("10.0.0.", i), later.Add(time.Hour))
		}()
	}
	wg.Wait()
	if got, _ := s.Token(ctx, "at_a"); !got.LastUsed.Equal(later.Add(time.Hour)) || len(got.LastAddr) < len("10.0.0.0") {
		t.Fatalf("after concurrent uses: %v from %q", got.LastUsed, got.LastAddr)
	}
}

func checkTokenRevoke(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustAddToken(t, s, agentToken("at_a", "U0ALICE"), t0)
	mustAddToken(t, s, agentToken("at_b", "U0ALICE"), t0)
	if _, err := s.UseToken(ctx, "hash-of-at_a", "192.0.2.1", t0); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Hour)
	got, err := s.RevokeToken(ctx, "at_a", "U0BOSS", at)
	if err != nil || got.ID != "at_a" || !got.Revoked.Equal(at) || got.RevokedBy != "U0BOSS" || got.Live(at) {
		t.Fatalf("RevokeToken = %+v, %v", got, err)
	}
	if live, _ := s.LiveTokens(ctx, "U0ALICE", at); fmt.Sprint(tokenIDs(live)) != "[at_b]" {
		t.Fatalf("LiveTokens after the revoke = %v; want at_b only", tokenIDs(live))
	}
	used, err := s.UseToken(ctx, "hash-of-at_a", "203.0.113.9", at.Add(time.Hour))
	if err != nil || !used.Revoked.Equal(at) || used.RevokedBy != "U0BOSS" || used.LastAddr != "192.0.2.1" || !used.LastUsed.Equal(t0) {
		t.Fatalf("UseToken of the revoked token = %+v, %v; want it, revoked, its use not recorded", used, err)
	}
	if _, err := s.RevokeToken(ctx, "at_a", "U0BOSS", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking twice = %v, want ErrNotFound", err)
	}
	if _, err := s.RevokeToken(ctx, "at_none", "U0BOSS", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking an unknown token = %v, want ErrNotFound", err)
	}
	if got, err := s.Token(ctx, "at_a"); err != nil || got.Revoked.IsZero() {
		t.Fatalf("Token of the revoked one = %+v, %v; want it kept, revoked", got, err)
	}
}

func checkTokenRevokeOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustAddToken(t, s, agentToken("at_a", "U0ALICE"), t0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.RevokeToken(ctx, "at_a", fmt.Sprint("U", i), t0.Add(time.Second))
			if err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			} else if !errors.Is(err, store.ErrNotFound) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d of 8 racing revokes succeeded, want 1", won)
	}
}

func checkTokenExpiry(t *testing.T, s store.Store) {
	ctx := context.Background()
	tok := agentToken("at_a", "U0ALICE")
	tok.Expires = t0.Add(time.Hour)
	mustAddToken(t, s, tok, t0)
	if live, _ := s.LiveTokens(ctx, "", t0.Add(time.Hour-time.Millisecond)); len(live) != 1 {
		t.Fatalf("live just before it expires: %v", tokenIDs(live))
	}
	at := t0.Add(time.Hour)
	if live, _ := s.LiveTokens(ctx, "", at); len(live) != 0 {
		t.Fatalf("live as it expires: %v; want none", tokenIDs(live))
	}
	got, err := s.UseToken(ctx, "hash-of-at_a", "192.0.2.1", at)
	if err != nil || got.Live(at) || !got.LastUsed.IsZero() {
		t.Fatalf("UseToken of the expired token = %+v, %v; want it, not live, its use not recorded", got, err)
	}
	if _, err := s.RevokeToken(ctx, "at_a", "U0ALICE", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking an expired token = %v, want ErrNotFound", err)
	}
	gone := tok.Expires.Add(store.TokenKeep)
	if _, err := s.UseToken(ctx, "hash-of-at_a", "192.0.2.1", gone); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UseToken %s after it expired = %v, want ErrNotFound (dropped)", store.TokenKeep, err)
	}
	// Dropped everywhere: its id and hash may be stored again.
	tok.Expires = gone.Add(time.Hour)
	if err := s.AddToken(ctx, tok, gone); err != nil {
		t.Fatalf("AddToken after the old one was dropped = %v", err)
	}
}

func checkTokensCapped(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := range store.MaxOwnerTokens {
		mustAddToken(t, s, agentToken(fmt.Sprint("at_", i), "U0ALICE"), t0)
	}
	if err := s.AddToken(ctx, agentToken("at_over", "U0ALICE"), t0); !errors.Is(err, store.ErrTooManyTokens) {
		t.Fatalf("AddToken beyond %d live = %v, want ErrTooManyTokens", store.MaxOwnerTokens, err)
	}
	mustAddToken(t, s, agentToken("at_bob", "U0BOB"), t0) // another owner's cap is their own
	if _, err := s.RevokeToken(ctx, "at_0", "U0ALICE", t0); err != nil {
		t.Fatal(err)
	}
	mustAddToken(t, s, agentToken("at_over", "U0ALICE"), t0) // a revoke frees a place
}

// ExerciseTokensShared checks that a revoke through one replica holds on
// another at once: shared returns two stores on one state.
func ExerciseTokensShared(t *testing.T, shared func(t *testing.T) (a, b store.Store)) {
	t.Run("TokenRevokeOnOneReplicaHoldsOnTheOther", func(t *testing.T) {
		t.Parallel()
		a, b := shared(t)
		ctx := context.Background()
		mustAddToken(t, a, agentToken("at_a", "U0ALICE"), t0)
		if got, err := b.UseToken(ctx, "hash-of-at_a", "192.0.2.1", t0); err != nil || !got.Live(t0) {
			t.Fatalf("b.UseToken = %+v, %v; want the live token a added", got, err)
		}
		if _, err := a.RevokeToken(ctx, "at_a", "U0ALICE", t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if got, err := b.UseToken(ctx, "hash-of-at_a", "192.0.2.1", t0.Add(time.Second)); err != nil || got.Live(t0.Add(time.Second)) {
			t.Fatalf("b.UseToken after a revoked = %+v, %v; want it revoked", got, err)
		}
	})
}
