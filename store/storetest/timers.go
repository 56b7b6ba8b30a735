package storetest

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// exerciseTimers checks the shared schedules (reminders), Remember (a
// session's thread) and a message's thread and copies.
func exerciseTimers(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("TimersFireInOrderAndArmOnce", func(t *testing.T) { checkTimersFireInOrderAndArmOnce(t, setup(t)) })
	t.Run("TimerMovesOnlyFromWhereItWasSeen", func(t *testing.T) { checkTimerMovesOnlyFromWhereItWasSeen(t, setup(t)) })
	t.Run("RememberKeepsTheFirstValue", func(t *testing.T) { checkRememberKeepsTheFirstValue(t, setup(t)) })
	t.Run("ForgetSpendsTheValueOnce", func(t *testing.T) { checkForgetSpendsTheValueOnce(t, setup(t)) })
	t.Run("PutReplacesTheValue", func(t *testing.T) { checkPutReplacesTheValue(t, setup(t)) })
	t.Run("MessageThreadAndCopiesRoundTrip", func(t *testing.T) { checkMessageThreadAndCopiesRoundTrip(t, setup(t)) })
}

func checkTimersFireInOrderAndArmOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i, id := range []string{"c3", "c1", "c2"} {
		if err := s.Arm(ctx, "remind", id, t0.Add(time.Duration(3-i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	// Arming again moves nothing: every post attempt arms.
	if err := s.Arm(ctx, "remind", "c3", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Arm(ctx, "other", "c9", t0); err != nil {
		t.Fatal(err)
	}
	got, err := s.Fired(ctx, "remind", t0.Add(2*time.Minute), 10)
	want := []store.Timer{{CallID: "c2", At: t0.Add(time.Minute)}, {CallID: "c1", At: t0.Add(2 * time.Minute)}}
	if err != nil || !sameTimers(got, want) {
		t.Fatalf("Fired = %v, %v; want %v (c3 fires at +3m, other timers apart)", got, err, want)
	}
	if got, _ := s.Fired(ctx, "remind", t0.Add(time.Hour), 1); !sameTimers(got, want[:1]) {
		t.Fatalf("Fired(limit 1) = %v", got)
	}
}

func sameTimers(a, b []store.Timer) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].CallID != b[i].CallID || !a[i].At.Equal(b[i].At) {
			return false
		}
	}
	return true
}

func checkTimerMovesOnlyFromWhereItWasSeen(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := t0.Add(time.Minute)
	if err := s.Arm(ctx, "remind", "c1", at); err != nil {
		t.Fatal(err)
	}
	// Replicas that all saw the entry race to move it: exactly one wins.
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, err := s.Move(ctx, "remind", "c1", at, t0.Add(time.Hour)); err != nil {
				t.Error(err)
			} else if ok {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d movers won; want exactly 1", won.Load())
	}
	if got, _ := s.Fired(ctx, "remind", t0.Add(30*time.Minute), 10); len(got) != 0 {
		t.Fatalf("Fired before its new time = %v", got)
	}
	if ok, _ := s.Move(ctx, "remind", "c1", at, time.Time{}); ok {
		t.Fatal("moved from a time it is no longer at")
	}
	if ok, err := s.Move(ctx, "remind", "c1", t0.Add(time.Hour), time.Time{}); err != nil || !ok {
		t.Fatalf("removing = %v, %v", ok, err)
	}
	if got, _ := s.Fired(ctx, "remind", t0.Add(24*time.Hour), 10); len(got) != 0 {
		t.Fatalf("Fired after removal = %v", got)
	}
	if ok, _ := s.Move(ctx, "remind", "c1", t0.Add(time.Hour), t0); ok {
		t.Fatal("moved a removed entry")
	}
}

func checkRememberKeepsTheFirstValue(t *testing.T, s store.Store) {
	ctx := context.Background()
	if v, err := s.Remember(ctx, "thread:C1:s1", "", time.Hour, t0); err != nil || v != "" {
		t.Fatalf("reading an unset key = %q, %v", v, err)
	}
	if v, err := s.Remember(ctx, "thread:C1:s1", "1.1", time.Hour, t0); err != nil || v != "1.1" {
		t.Fatalf("first Remember = %q, %v", v, err)
	}
	if v, err := s.Remember(ctx, "thread:C1:s1", "2.2", time.Hour, t0); err != nil || v != "1.1" {
		t.Fatalf("second Remember = %q, %v; want the first value", v, err)
	}
	if v, _ := s.Remember(ctx, "thread:C1:s1", "", time.Hour, t0); v != "1.1" {
		t.Fatalf("reading = %q", v)
	}
	if v, _ := s.Remember(ctx, "thread:C1:s2", "3.3", time.Hour, t0); v != "3.3" {
		t.Fatalf("another key = %q", v)
	}
}

func checkPutReplacesTheValue(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, v := range []string{"h1 d1", "h2 d2"} {
		if err := s.Put(ctx, "home:U1", v, time.Hour, t0); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Remember(ctx, "home:U1", "", time.Hour, t0); err != nil || got != v {
			t.Fatalf("after Put(%q) read %q, %v", v, got, err)
		}
	}
	if got, _ := s.Remember(ctx, "home:U2", "", time.Hour, t0); got != "" {
		t.Fatalf("another key = %q", got)
	}
}

func checkForgetSpendsTheValueOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.Put(ctx, "web:login:x", "nonce", time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := s.Forget(ctx, "web:login:x", t0)
			if err != nil {
				t.Error(err)
			}
			got <- v
		}()
	}
	wg.Wait()
	close(got)
	var spent []string
	for v := range got {
		if v != "" {
			spent = append(spent, v)
		}
	}
	if len(spent) != 1 || spent[0] != "nonce" {
		t.Fatalf("racing Forgets got %q; want the value exactly once", spent)
	}
	if v, _ := s.Remember(ctx, "web:login:x", "", time.Hour, t0); v != "" {
		t.Fatalf("a forgotten key reads %q", v)
	}
	if v, err := s.Forget(ctx, "web:never", t0); err != nil || v != "" {
		t.Fatalf("forgetting an unset key = %q, %v", v, err)
	}
}

func checkMessageThreadAndCopiesRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	ref := asktype.MessageRef{Conversation: "C1", ID: "2.000200", Thread: "1.000100",
		Copies: []asktype.MessageRef{{Conversation: "D1", ID: "3.000300"}}}
	mustCreate(t, s, newAsk("c1"))
	if _, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "h1", TTL: time.Minute, Now: t0}); err != nil {
		t.Fatal(err)
	}
	a, err := s.FinishPost(ctx, "c1", "h1", ref, 1)
	if err != nil || !reflect.DeepEqual(a.Message, ref) {
		t.Fatalf("FinishPost = %+v, %v; want %+v", a.Message, err, ref)
	}
	if got, _ := s.Get(ctx, "c1"); !reflect.DeepEqual(got.Message, ref) {
		t.Fatalf("read back %+v", got.Message)
	}
	mustCreate(t, s, newAsk("c2"))
	if a, err := s.SetMessage(ctx, "c2", ref); err != nil || !reflect.DeepEqual(a.Message, ref) {
		t.Fatalf("SetMessage = %+v, %v", a.Message, err)
	}
	if a, err := s.Refuse(ctx, "c2", "C1", "channel_not_found", t0); err != nil || a.Message.Thread != "" || a.Message.Copies != nil {
		t.Fatalf("Refuse kept the old message's thread or copies: %+v, %v", a.Message, err)
	}
}
