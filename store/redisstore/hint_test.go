package redisstore

import (
	"testing"
	"time"
)

// The feed's messages as this release reads them: the ask's hint and the
// session's apart (what every release publishes today), and both in one
// message (what a later release will publish, so read first).
func TestHintReadsBothForms(t *testing.T) {
	r, _ := newTestRedis(t, Options{})
	for _, tc := range []struct{ name, payload, session string }{
		{"apart", "s:local/s1", "local/s1"},
		{"together", "a:c2|3|local/s|2", "local/s|2"},
	} {
		changes, stop := r.SessionChanges(tc.session)
		r.hint(tc.payload)
		select {
		case <-changes:
		case <-time.After(5 * time.Second):
			t.Errorf("%s: %q did not wake session %q", tc.name, tc.payload, tc.session)
		}
		stop()
	}
	asks, stop := r.Changes("c2")
	defer stop()
	r.hint("a:c2|4|local/s")
	select {
	case <-asks:
	case <-time.After(5 * time.Second):
		t.Fatal("the ask's hint in the combined form woke nobody")
	}
	if n := r.Heard("c2"); n != 4 {
		t.Fatalf("heard version %d, want 4", n)
	}
}
