package store

// Feed is the change feed: hints, coalesced, that something changed, on
// any replica (storetest/feed.go). Readers re-read.
type Feed interface {
	// Changes returns a channel that receives a value (coalesced) whenever
	// the ask changes, until stop is called.
	Changes(callID string) (ch <-chan struct{}, stop func())
	// Released signals (coalesced) whenever a wait lease is released, on any
	// replica, so keepers can take it over at once.
	Released() (ch <-chan struct{}, stop func())
	// SessionChanges is Changes for any ask of a session.
	SessionChanges(sessionID string) (ch <-chan struct{}, stop func())
	// Heard is the newest version of the ask this process has heard of
	// (Hub.Heard): local, no store read; 0 when none lately.
	Heard(callID string) int64
}
