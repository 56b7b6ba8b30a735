package store

import (
	"context"

	"github.com/askslack/askslack/asktype"
)

// Sessions read the asks of one agent session (storetest/sessions.go).
type Sessions interface {
	// Session returns the asks of one session in creation order: those
	// whose stored SessionID is sessionID.
	Session(ctx context.Context, sessionID string) ([]*asktype.Ask, error)
	// Replies returns the session's continued asks with a queued reply
	// (QueueReply, not yet acknowledged), oldest reply first. It reads only
	// those asks, not the whole session.
	Replies(ctx context.Context, sessionID string) ([]*asktype.Ask, error)
}
