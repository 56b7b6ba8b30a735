package heapfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, floor int64
		want        int
	}{
		{0, 32 * mb, maxPercent},
		{1 * mb, 32 * mb, maxPercent},   // 3200 % capped
		{4 * mb, 32 * mb, 800},          // goal 36 MiB
		{16 * mb, 32 * mb, 200},         // goal 48 MiB
		{32 * mb, 32 * mb, 100},         // the default from here on
		{200 * mb, 32 * mb, minPercent}, // a big heap collects as GOGC=100
		{3 * mb, 32 * mb, 1067},         // rounds up: never below the floor
	} {
		if got := Percent(c.live, c.floor); got != c.want {
			t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", c.live/mb, c.floor/mb, got, c.want)
		}
	}
}

// TestFloorFollowsTheLiveHeap runs the real hook: after a collection the
// percent it set matches the live heap, and stop puts GOGC back to 100.
func TestFloorFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	sets := make(chan int, 64)
	f := &Floor{floor: 1 << 40, set: func(p int) { sets <- p }}
	f.sample = sampleLive()
	f.tune()
	if p := <-sets; p != maxPercent {
		t.Fatalf("a 1 TiB floor set %d, want %d", p, maxPercent)
	}
	f.floor = 1 // any live heap is larger: the default
	f.arm()
	deadline := time.After(10 * time.Second)
	for {
		runtime.GC()
		select {
		case p := <-sets:
			if p != minPercent {
				t.Fatalf("after a collection with a 1-byte floor: set %d, want %d", p, minPercent)
			}
			f.stopped.Store(true)
			return
		case <-deadline:
			t.Fatal("no retune after collections: the cleanup hook never ran")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestStartRespectsGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	debug.SetGCPercent(123)
	stop := Start(64<<20, true)
	stop()
	if p := debug.SetGCPercent(100); p != 123 {
		t.Fatalf("with GOGC set, Start changed the percent to %d", p)
	}
	stop = Start(64<<20, false)
	if p := gcPercent(); p <= 100 {
		t.Fatalf("Start with a 64 MiB floor on a small heap left GOGC at %d", p)
	}
	stop()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Fatalf("stop left GOGC at %d, want 100", p)
	}
}

// gcPercent reads GOGC's current percent.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}
