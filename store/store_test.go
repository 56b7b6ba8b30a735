package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store {
		return store.NewMemory(0, nil)
	})
	storetest.ExerciseAuditShared(t, storetest.AuditHarness{
		Shared: func(*testing.T) (store.Store, store.Store) {
			m := store.NewMemory(0, nil)
			return m, m
		},
	})
	storetest.ExerciseRulesShared(t, func(*testing.T) (store.Store, store.Store) {
		m := store.NewMemory(0, nil)
		return m, m
	})
	storetest.ExerciseTokensShared(t, func(*testing.T) (store.Store, store.Store) {
		m := store.NewMemory(0, nil)
		return m, m
	})
}

// A read of the embedded store costs one small allocation: the record is
// copied, its JSON (a few kB of request) is shared, never written into;
// and what a caller hands the store stays the store's own.
func TestMemoryReadsShareTheJSON(t *testing.T) {
	m := store.NewMemory(0, nil)
	ctx := context.Background()
	req := json.RawMessage(`{"callId":"c1","questions":[{"id":"q","question":"` + strings.Repeat("x", 4000) + `"}]}`)
	mine := append(json.RawMessage(nil), req...)
	if _, _, err := m.Create(ctx, &asktype.Ask{CallID: "c1", SessionID: "s", Request: mine, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	ref := asktype.MessageRef{Conversation: "C1", ID: "1.1", Copies: []asktype.MessageRef{{Conversation: "D1", ID: "2.2"}}}
	if _, err := m.SetMessage(ctx, "c1", ref); err != nil {
		t.Fatal(err)
	}
	mine[2], ref.Copies[0].ID = 'X', "9.9" // the caller reuses what it handed over
	a, err := m.Get(ctx, "c1")
	if err != nil || string(a.Request) != string(req) || a.Message.Copies[0].ID != "2.2" {
		t.Fatalf("the store kept the caller's slices: %s %+v %v", a.Request[:12], a.Message, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = m.Get(ctx, "c1") }); n > 1 {
		t.Fatalf("a read allocates %v times; want one (the record), the JSON shared", n)
	}
}
