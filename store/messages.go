package store

import (
	"context"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Messages keep the record of the chat message that shows each ask
// (storetest/messages.go).
type Messages interface {
	// SetMessage records the message showing the ask (or, with
	// ref.Refused, that the surface refused it for good).
	SetMessage(ctx context.Context, callID string, ref asktype.MessageRef) (*asktype.Ask, error)
	// BeginPost takes the "post" lease of an ask for h.Holder until
	// h.Now+h.TTL (ErrHeld while another holder has it) and, when a message should be
	// posted (none yet, not refused, the ask active), records the first post
	// attempt. It returns the ask as it was before: a non-zero PostAttempt
	// means an earlier attempt may have posted. One round trip for what
	// Acquire, Get and recording the attempt would. With ErrHeld the ask
	// comes back too, its Poster naming the other holder's lease, so the
	// caller can try again as that lease ends.
	BeginPost(ctx context.Context, callID string, h Hold) (*asktype.Ask, error)
	// FinishPost records the message a post made (or found), releases
	// holder's post lease, and, when shown is the version the message was
	// rendered from and nothing else changed since, marks it rendered.
	// shown 0 means the message's content is unknown (an adopted post).
	// With holder Adopted (a message the surface saw another way than its
	// post's reply, say a click on it) it records ref only when no
	// message is recorded yet, and releases no lease: the post's own
	// record, with everything it knows (DM copies), is never overwritten.
	// A ref equal to the one recorded (the post's reply after a click
	// adopted its message) changes nothing but the lease: no new version,
	// so the message, rendered since through the click, is not behind.
	// A ref naming another message than the one recorded (the ask was
	// posted twice, or a click came from a message the record did not
	// know) never replaces it: it is kept among the copies
	// (asktype.MessageRef.Keeping), with a new version, so renders reach
	// it too and no message of an ended ask keeps live controls.
	FinishPost(ctx context.Context, callID, holder string, ref asktype.MessageRef, shown int64) (*asktype.Ask, error)
	// AbandonPost gives holder's post lease back and forgets the recorded
	// post attempt, when the surface answered that the post was not made
	// (a rate limit): the attempt before it, if any, was looked for first
	// and not found, so the next attempt posts without looking again.
	// Nothing changes unless holder holds the lease.
	AbandonPost(ctx context.Context, callID, holder string) error
	// Refuse records that the surface will never show the ask (why is its
	// reason); an open untimed ask ends there, aborted with NoMessage (the
	// caller's NO_PROVIDER), while a timed one waits out its window.
	Refuse(ctx context.Context, callID, channel, why string, at time.Time) (*asktype.Ask, error)
	// MarkRendered records that version ver of the ask is what users see,
	// and reports whether that is its latest version (false: it changed
	// meanwhile, and its message needs another render).
	MarkRendered(ctx context.Context, callID string, ver int64) (caughtUp bool, err error)
	// Stale lists asks whose message is behind the ask (Rendered <
	// Version) and that last changed at or before before: the updates a
	// crashed or failing replica never made, and the active asks whose post
	// never happened. Entries nothing can be done for are pruned: caught up,
	// expired, refused by the surface, or ended without any attempt to post.
	Stale(ctx context.Context, before time.Time, limit int) ([]string, error)
	// Handoff puts the asks first in line in the stale index — Stale
	// lists them for any before from HandoffBefore on — and tells every
	// replica (HandedOff): a stopping replica gives away the renders and
	// posts it owes and could not make, for another to make at once
	// rather than after its sweep's lag.
	Handoff(ctx context.Context, callIDs []string) error
	// HandedOff signals (coalesced) whenever a replica handed asks over.
	HandedOff() (ch <-chan struct{}, stop func())
}

// HandoffBefore is the before for which Stale lists only what was handed
// over (Messages.Handoff): those entries sort before any change's.
var HandoffBefore = time.UnixMilli(1)
