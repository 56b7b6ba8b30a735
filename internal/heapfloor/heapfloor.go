// Package heapfloor keeps the garbage collector from working hard on a
// small heap. With GOGC=100 a bot whose live heap is a few megabytes
// collects every few megabytes allocated: at a thousand asks a second that
// is many collections a second, a tenth of the bot's CPU, for memory it
// does not need to save. heapfloor lets the heap grow at least floor bytes
// past the live heap before the next collection, and no less than GOGC=100
// would: once the live heap is larger than floor (10,000 asks held open)
// it collects exactly as GOGC=100 does, so memory per ask is unchanged
// where memory matters. A GOMEMLIMIT still caps the heap as usual.
package heapfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Bounds of the GOGC percent it sets: never below the default, and never
// so high that one collection's growth is unbounded on a tiny heap.
const (
	minPercent = 100
	maxPercent = 2000
)

// Percent is the GOGC percent that lets a heap with live bytes grow by at
// least floor before collecting, within [100, 2000].
func Percent(live, floor int64) int {
	if live <= 0 {
		return maxPercent
	}
	p := math.Ceil(float64(floor) * 100 / float64(live))
	return int(max(minPercent, min(maxPercent, p)))
}

// Floor retunes GOGC after every collection until stopped.
type Floor struct {
	floor   int64
	stopped atomic.Bool
	sample  []metrics.Sample
	set     func(percent int) // debug.SetGCPercent; tests swap it
	last    atomic.Int64      // the percent set last
}

// Start keeps the heap goal at least floor bytes above the live heap. It
// does nothing (and returns a no-op stop) when GOGC is set in the
// environment: whoever set it has chosen.
func Start(floor int64, gogcSet bool) (stop func()) {
	if gogcSet || floor <= 0 {
		return func() {}
	}
	f := &Floor{floor: floor, sample: sampleLive(), set: func(p int) { debug.SetGCPercent(p) }}
	f.tune()
	f.arm()
	return func() {
		f.stopped.Store(true)
		f.set(minPercent)
	}
}

func sampleLive() []metrics.Sample { return []metrics.Sample{{Name: "/gc/heap/live:bytes"}} }

// sentinel is a heap object whose cleanup marks the end of a GC cycle.
type sentinel struct{ _ [64]byte }

// arm registers a cleanup that runs once the next collection has found
// a fresh sentinel unreachable, retunes, and arms again.
func (f *Floor) arm() {
	s := &sentinel{}
	runtime.AddCleanup(s, func(f *Floor) {
		if f.stopped.Load() {
			return
		}
		f.tune()
		f.arm()
	}, f)
}

// tune sets GOGC from the live heap the last collection measured.
func (f *Floor) tune() {
	metrics.Read(f.sample)
	var live int64
	if f.sample[0].Value.Kind() == metrics.KindUint64 {
		live = int64(f.sample[0].Value.Uint64())
	}
	p := Percent(live, f.floor)
	if f.last.Swap(int64(p)) != int64(p) {
		f.set(p)
	}
}
