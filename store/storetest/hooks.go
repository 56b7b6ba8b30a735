package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// exerciseHooks checks what webhook delivery keeps in the store: the audit
// trail followed by position (AuditTail) and capped lists (Lists).
func exerciseHooks(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("AuditFromFollowsTheTrailEntryByEntry", func(t *testing.T) { checkAuditFrom(t, setup(t)) })
	t.Run("AuditEndSkipsWhatCameBefore", func(t *testing.T) { checkAuditEnd(t, setup(t)) })
	t.Run("ListsPushRangeRemove", func(t *testing.T) { checkLists(t, setup(t)) })
	t.Run("ListsRacingRemoversOneWins", func(t *testing.T) { checkListsRace(t, setup(t)) })
}

// follow reads the whole trail from pos, limit entries at a time, through
// the positions AuditFrom returns.
func follow(t *testing.T, s store.Store, pos string, limit int) []store.TrailEntry {
	t.Helper()
	var all []store.TrailEntry
	for range 1000 {
		page, err := s.AuditFrom(context.Background(), pos, limit)
		if err != nil {
			t.Fatalf("AuditFrom(%q, %d): %v", pos, limit, err)
		}
		if len(page) > limit {
			t.Fatalf("AuditFrom(%q, %d) returned %d entries", pos, limit, len(page))
		}
		if len(page) == 0 {
			return all
		}
		all = append(all, page...)
		pos = page[len(page)-1].Pos
	}
	t.Fatal("AuditFrom never reached the end")
	return nil
}

// Read two entries at a time, from the start, the trail is the one Audit
// pages: the same entries in the same order, each with a position one can
// go on from; a bad position is refused.
func checkAuditFrom(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := range 3 {
		id := fmt.Sprintf("f%d", i)
		mustCreate(t, s, newAsk(id))
		if _, err := s.Settle(ctx, id, settlement("U1"), t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	all := Trail(t, s, asktype.AuditQuery{}) // chains what waits
	got := follow(t, s, "", 2)
	if len(got) != len(all) || len(all) != 6 {
		t.Fatalf("AuditFrom read %d entries, Audit %d; want 6", len(got), len(all))
	}
	seen := map[string]bool{}
	for i := range got {
		if got[i].Hash != all[i].Hash || got[i].Seq != int64(i+1) {
			t.Fatalf("entry %d: %+v; Audit has %+v", i, got[i].AuditEntry, all[i])
		}
		if got[i].Pos == "" || seen[got[i].Pos] {
			t.Fatalf("entry %d has position %q (empty or seen before)", i, got[i].Pos)
		}
		seen[got[i].Pos] = true
	}
	if rest := follow(t, s, got[3].Pos, 10); len(rest) != 2 || rest[0].Seq != 5 {
		t.Fatalf("after the fourth entry: %d entries, first seq %d; want 2 from seq 5", len(rest), rest[0].Seq)
	}
	if rest := follow(t, s, got[5].Pos, 10); len(rest) != 0 {
		t.Fatalf("after the last entry: %d entries", len(rest))
	}
	if _, err := s.AuditFrom(ctx, "not a position", 10); !errors.Is(err, store.ErrBadCursor) {
		t.Fatalf("a bad position: %v; want ErrBadCursor", err)
	}
}

// AuditEnd of an empty trail reads everything that comes; after entries,
// it names the last one, and reading from it yields only what comes later,
// chained or not yet when AuditFrom is first called.
func checkAuditEnd(t *testing.T, s store.Store) {
	ctx := context.Background()
	pos, seq, err := s.AuditEnd(ctx)
	if err != nil || pos != "" || seq != 0 {
		t.Fatalf("AuditEnd of an empty trail = %q, %d, %v", pos, seq, err)
	}
	mustCreate(t, s, newAsk("before"))
	pos, seq, err = s.AuditEnd(ctx)
	if err != nil || pos == "" || seq != 1 {
		t.Fatalf("AuditEnd after one entry = %q, %d, %v", pos, seq, err)
	}
	mustCreate(t, s, newAsk("after"))
	Trail(t, s, asktype.AuditQuery{}) // chains what waits
	got := follow(t, s, pos, 10)
	if len(got) != 1 || got[0].CallID != "after" || got[0].Seq != 2 {
		t.Fatalf("after the end: %+v; want the one entry of after", got)
	}
	if pos2, seq2, err := s.AuditEnd(ctx); err != nil || pos2 != got[0].Pos || seq2 != 2 {
		t.Fatalf("AuditEnd = %q, %d, %v; want %q, 2", pos2, seq2, err, got[0].Pos)
	}
}

func checkLists(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := time.Now()
	if vs, err := s.ListRange(ctx, "none", 0, now); err != nil || len(vs) != 0 {
		t.Fatalf("an unknown list: %v, %v", vs, err)
	}
	for _, v := range []string{"a", "b", "c", "b"} {
		if err := s.ListPush(ctx, "l1", v, 3, time.Hour, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ListPush(ctx, "l2", "other", 3, time.Hour, now); err != nil {
		t.Fatal(err)
	}
	vs, err := s.ListRange(ctx, "l1", 0, now)
	if err != nil || fmt.Sprint(vs) != "[b c b]" {
		t.Fatalf("capped at 3: %v, %v; want [b c b]", vs, err)
	}
	if vs, _ := s.ListRange(ctx, "l1", 2, now); fmt.Sprint(vs) != "[b c]" {
		t.Fatalf("the first 2: %v", vs)
	}
	if ok, err := s.ListRemove(ctx, "l1", "b", now); err != nil || !ok {
		t.Fatalf("removing b: %v, %v", ok, err)
	}
	if vs, _ := s.ListRange(ctx, "l1", 0, now); fmt.Sprint(vs) != "[c b]" {
		t.Fatalf("after removing one b: %v; want the oldest gone", vs)
	}
	if ok, err := s.ListRemove(ctx, "l1", "a", now); err != nil || ok {
		t.Fatalf("removing a value that is not there: %v, %v", ok, err)
	}
	if vs, _ := s.ListRange(ctx, "l2", 0, now); fmt.Sprint(vs) != "[other]" {
		t.Fatalf("another list: %v", vs)
	}
}

// Of eight callers removing one value pushed once, one removes it.
func checkListsRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := time.Now()
	if err := s.ListPush(ctx, "race", "v", 10, time.Hour, now); err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := s.ListRemove(ctx, "race", "v", now)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d removers got the value; want 1", won.Load())
	}
}
