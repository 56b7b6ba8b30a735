package startstop

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestLaunchRunsUntilHalt(t *testing.T) {
	var b Base
	ended := make(chan struct{})
	started := make(chan struct{})
	parent, cancelParent := context.WithCancel(context.Background())
	if err := b.Launch(parent, nil, func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		close(ended)
	}); err != nil {
		t.Fatal(err)
	}
	<-started
	cancelParent() // the caller's context ending does not stop the run
	select {
	case <-ended:
		t.Fatal("the run ended with the caller's context")
	case <-time.After(20 * time.Millisecond):
	}
	if err := b.Launch(context.Background(), func(context.Context) error { t.Fatal("prepared twice"); return nil }, func(context.Context) {}); !errors.Is(err, ErrStartedTwice) {
		t.Fatalf("second Launch = %v; want ErrStartedTwice", err)
	}
	released := 0
	if err := b.Halt(context.Background(), func() { released++ }); err != nil || released != 1 {
		t.Fatalf("Halt = %v, released %d times", err, released)
	}
	<-ended
	if err := b.Halt(context.Background(), func() { released++ }); err != nil || released != 1 {
		t.Fatalf("a second Halt = %v, released %d times; want nothing released again", err, released)
	}
	if err := b.Launch(context.Background(), nil, func(context.Context) { t.Error("ran after Halt") }); err != nil {
		t.Fatalf("Launch after Halt = %v; want nil (does nothing)", err)
	}
}

func TestFailedPrepareMayBeRetried(t *testing.T) {
	var b Base
	boom := errors.New("boom")
	if err := b.Launch(context.Background(), func(context.Context) error { return boom }, func(context.Context) { t.Error("ran after a failed prepare") }); !errors.Is(err, boom) {
		t.Fatalf("Launch = %v", err)
	}
	ran := make(chan struct{})
	if err := b.Launch(context.Background(), func(context.Context) error { return nil }, func(context.Context) { close(ran) }); err != nil {
		t.Fatalf("retried Launch = %v", err)
	}
	<-ran
	if err := b.Halt(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestHaltBeforeLaunchAndWithinBudget(t *testing.T) {
	var b Base
	released := false
	if err := b.Halt(context.Background(), func() { released = true }); err != nil || !released {
		t.Fatalf("Halt before Launch = %v, released %v; want nil and released", err, released)
	}
	var slow Base
	release := make(chan struct{})
	defer close(release)
	_ = slow.Launch(context.Background(), nil, func(context.Context) { <-release })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	released = false
	if err := slow.Halt(ctx, func() { released = true }); !errors.Is(err, context.Canceled) || !released {
		t.Fatalf("Halt of a run that outlives the budget = %v, released %v; want the budget's error, and released", err, released)
	}
}
