package workpool

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A job that panics is reported; the worker and its key's bookkeeping go
// on (a later job for the same key still runs).
func TestSurvivesAPanickingJob(t *testing.T) {
	t.Parallel()
	panics := make(chan any, 1)
	p := New(1, func(r any, stack []byte) { panics <- r })
	defer p.Stop(context.Background())
	p.Submit("k", func(context.Context) { panic("boom") })
	if r := <-panics; r != "boom" {
		t.Fatalf("recovered %v", r)
	}
	ran := make(chan struct{})
	p.Submit("k", func(context.Context) { close(ran) })
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the pool stopped running jobs after a panic")
	}
}

// A burst of submissions of one key while a job of that key runs costs one
// more run, never a concurrent one.
func TestCoalescesPerKey(t *testing.T) {
	t.Parallel()
	p := New(4, nil)
	defer p.Stop(context.Background())
	release := make(chan struct{})
	started := make(chan struct{})
	var runs, running atomic.Int32
	job := func(context.Context) {
		if running.Add(1) > 1 {
			t.Error("two jobs of one key ran at once")
		}
		if runs.Add(1) == 1 {
			close(started)
			<-release
		}
		running.Add(-1)
	}
	p.Submit("k", job)
	<-started
	for range 10 {
		p.Submit("k", job)
	}
	close(release)
	p.Stop(context.Background())
	if n := runs.Load(); n != 2 {
		t.Fatalf("%d runs, want 2 (the first and one coalesced re-run)", n)
	}
}
