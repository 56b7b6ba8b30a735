package store

import (
	"context"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Memory's Budget (budget.go): token buckets and turns, in process.

type memBucket struct {
	tokens float64
	at     time.Time
}

// memTurns are TakeTurn's groups of one bucket: who waits until when and
// in which class, and when each was last served.
type memTurns struct {
	waiting map[string]time.Time
	class   map[string]int
	served  map[string]time.Time
}

// Take implements Store.
func (m *Memory) Take(_ context.Context, bk asktype.Bucket, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.refill(bk, now)
	took := b.tokens >= 1
	if took {
		b.tokens--
	}
	m.bucket[bk.Name] = b
	return took, nil
}

// refill is bucket bk's tokens brought up to now (stored); the caller holds
// m.mu.
func (m *Memory) refill(bk asktype.Bucket, now time.Time) memBucket {
	b, ok := m.bucket[bk.Name]
	if !ok {
		b = memBucket{tokens: float64(bk.Burst), at: now}
	}
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(float64(bk.Burst), b.tokens+el.Minutes()*float64(bk.PerMinute))
		b.at = now
	}
	m.bucket[bk.Name] = b
	return b
}

// TakeTurn implements Store.
func (m *Memory) TakeTurn(_ context.Context, t Turn) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.turns == nil {
		m.turns = map[string]*memTurns{}
	}
	tu := m.turns[t.Bucket.Name]
	if tu == nil {
		tu = &memTurns{waiting: map[string]time.Time{}, class: map[string]int{}, served: map[string]time.Time{}}
		m.turns[t.Bucket.Name] = tu
	}
	for _, g := range t.Left {
		delete(tu.waiting, g)
		delete(tu.class, g)
	}
	mine := map[string]bool{}
	for _, g := range t.Groups {
		tu.waiting[g.Name], tu.class[g.Name], mine[g.Name] = t.Now.Add(t.Wait), g.Class, true
	}
	due := ""
	for g, until := range tu.waiting {
		if !until.After(t.Now) {
			delete(tu.waiting, g)
			delete(tu.class, g)
			continue
		}
		c, dc := tu.class[g], tu.class[due]
		if due == "" || c < dc || c == dc && (tu.served[g].Before(tu.served[due]) || tu.served[g].Equal(tu.served[due]) && g < due) {
			due = g
		}
	}
	for g, at := range tu.served {
		if t.Now.Sub(at) > turnMemory {
			delete(tu.served, g)
		}
	}
	b := m.refill(t.Bucket, t.Now)
	if b.tokens < 1 {
		return "", false, nil
	}
	if due == "" || !mine[due] {
		return "", true, nil
	}
	b.tokens--
	m.bucket[t.Bucket.Name] = b
	tu.served[due] = t.Now
	return due, true, nil
}

// turnMemory is how long TakeTurn remembers when a group was served.
const turnMemory = time.Hour

// Drain implements Store.
func (m *Memory) Drain(_ context.Context, bk asktype.Bucket, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.bucket[bk.Name]
	m.bucket[bk.Name] = memBucket{tokens: 0, at: later(b.at, until)}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
