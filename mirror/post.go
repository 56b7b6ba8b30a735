package mirror

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Posting a question is a job, not part of the request that asked it. The
// request that creates an ask only kicks the job; the job runs on the
// mirror's pool under its own context, on whichever replica gets to it (a
// post lease keeps two from posting at once), and every replica's sweep
// finds it again (the store's stale index lists active asks without a
// message) if the replica that started it dies. So an ask that settles, is
// withdrawn or whose window closes while its post is in flight still gets
// its message, and the message is then brought up to date like any other.
//
// A post is never blindly sent twice: the first attempt is recorded as the
// post lease is taken (BeginPost); any later attempt first asks the surface
// to Find a message an earlier attempt made, and adopts it. Taking the
// lease and recording the message (FinishPost) are one round trip each.
//
// An ask that is no longer open while its post's outcome is unknown (an
// attempt recorded, no message) is looked for at once by whichever replica
// sees it, even while another holds the post lease: the holder may have
// died after Slack stored its post, and that message must not keep live
// controls until the lease runs out. Looking posts nothing; only the
// holder of the lease ever posts.

// postLease bounds how long a crashed poster blocks others from posting.
const postLease = 30 * time.Second

// leasePost names the post lease of an ask.
const leasePost = "post"

// ensurePosted runs the post job for an ask that has no message yet.
func (m *Mirror) ensurePosted(ctx context.Context, a *asktype.Ask, attempt int) {
	leased := m.leased(a)
	if leased && !a.PostAttempt.IsZero() {
		// A newer record of an ask created with this mirror's lease: the
		// attempt recorded at creation is this job's, not yet made.
		b := *a
		b.PostAttempt = time.Time{}
		a = &b
	}
	if a.Message.Refused != "" || (!a.State.Active() && a.PostAttempt.IsZero()) {
		// Nothing can be shown: the surface refused it, or it ended before
		// anyone tried. Mark it rendered so it leaves the stale index, and
		// give back the lease Create may have taken for this job.
		m.markRendered(ctx, a)
		if leased {
			m.release(ctx, a.CallID)
		}
		return
	}
	// One round trip takes the lease, reads the ask under it and records
	// the attempt; the ask comes back as it was before that. A record
	// fresh from Create may say that round trip was part of creating it.
	callID := a.CallID
	var err error
	if !leased {
		a, err = m.st.BeginPost(ctx, callID, store.Hold{Holder: m.holder, TTL: postLease, Now: m.clock.Now()})
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return
	case errors.Is(err, store.ErrHeld) && a != nil && endedUnknown(a):
		m.findHeld(ctx, a, attempt)
		return
	case errors.Is(err, store.ErrHeld):
		// Another replica is posting; should it die, its lease runs out:
		// look again just as it does (a whole lease later left a killed
		// replica's questions unposted for up to a minute). The look does
		// not count as a failed attempt: counted, a few of them made the
		// next real failure back off a minute or more.
		m.runAfter(callID, m.heldFor(a), attempt)
		return
	case err != nil:
		m.log.Warn("taking the post lease failed; retrying", "callId", callID, "err", err)
		m.retryLater(callID, attempt)
		return
	}
	finished, err := m.postHeld(ctx, a)
	var np notPosted
	switch {
	case errors.As(err, &np):
		m.abandon(ctx, a.CallID) // the next attempt need not look for this one
	case !finished:
		m.release(ctx, a.CallID) // FinishPost releases it on success
	}
	if err != nil {
		m.log.Warn("posting the question failed; retrying", "callId", a.CallID, "attempt", attempt+1, "err", err)
		if d := m.surface.RetryAfter(err); d > 0 {
			m.pacer.cooldown(a, true, d)
			m.retryAfter(a.CallID, d, attempt)
			return
		}
		m.retryLater(a.CallID, attempt)
	}
}

// heldFor is how long to wait before trying again to post an ask whose
// post lease another replica holds (BeginPost's ErrHeld names it): until
// that lease ends, and a little; a whole lease when it is not named.
func (m *Mirror) heldFor(a *asktype.Ask) time.Duration {
	const slack = 250 * time.Millisecond
	if a == nil || a.Poster.Until.IsZero() {
		return postLease
	}
	return min(max(a.Poster.Until.Sub(m.clock.Now()), 0)+slack, postLease)
}

// endedUnknown reports whether a left open while a post of it may be in
// Slack unrecorded: an attempt was made, no message or refusal recorded.
func endedUnknown(a *asktype.Ask) bool {
	return a.State != asktype.Open && !a.PostAttempt.IsZero() && !a.Message.Posted() && a.Message.Refused == ""
}

// findHeld looks for the message of an ask that is no longer open while
// another replica holds its post lease (a read under ErrHeld). That replica
// may have died between Slack storing its post and recording it, leaving
// live controls on a question that is over until its lease runs out;
// finding and recording a message posts nothing, so it needs no lease, and
// the message is then brought up to date like any other. Nothing found is
// not the end: the holder may still be posting, so it looks again later
// (the ask stays on the stale index too), and once the lease is free the
// usual path decides under it.
func (m *Mirror) findHeld(ctx context.Context, a *asktype.Ask, attempt int) {
	found, err := m.adopt(ctx, a)
	switch {
	case err != nil:
		m.log.Warn("looking for the ended question's earlier post failed; retrying", "callId", a.CallID, "err", err)
		if d := m.surface.RetryAfter(err); d > 0 {
			m.retryAfter(a.CallID, d, attempt)
			return
		}
		m.retryLater(a.CallID, attempt)
	case !found:
		m.log.Info("the ended question's earlier post is not found yet; looking again", "callId", a.CallID)
		m.retryLater(a.CallID, attempt)
	}
}

// notPosted is a post the surface answered it did not make: rate limited,
// so the attempt left no message behind.
type notPosted struct{ error }

func (e notPosted) Unwrap() error { return e.error }

// abandon gives back this mirror's post lease and forgets its attempt
// (store.AbandonPost): a retry then posts without a Find first, which on
// Slack is a conversations.history call (Tier 3) per rate-limited post.
func (m *Mirror) abandon(ctx context.Context, callID string) {
	if err := m.st.AbandonPost(context.WithoutCancel(ctx), callID, m.holder); err != nil {
		m.log.Warn("giving up the post lease failed", "callId", callID, "err", err)
	}
}

// release gives back this mirror's post lease of an ask.
func (m *Mirror) release(ctx context.Context, callID string) {
	if err := m.st.Release(context.WithoutCancel(ctx), callID, leasePost, m.holder); err != nil {
		m.log.Warn("releasing the post lease failed", "callId", callID, "err", err)
	}
}

// PostLease implements waterfall.Poster: an ask created on this replica is
// created with its post lease held by this mirror.
func (m *Mirror) PostLease(now time.Time) asktype.PostLease {
	return asktype.PostLease{Holder: m.holder, Until: now.Add(postLease)}
}

// leased reports whether a is the record Create returned with this
// mirror's post lease, with time to spare: then a is what BeginPost would
// have returned. A job that ran late takes the lease again instead.
func (m *Mirror) leased(a *asktype.Ask) bool {
	return a.Poster.Holder == m.holder && m.clock.Now().Before(a.Poster.Until.Add(-postLease/2))
}

// postHeld posts a (as read under the post lease). finished reports that
// FinishPost recorded a message (and released the lease); err is only for
// what a later attempt may fix.
func (m *Mirror) postHeld(ctx context.Context, a *asktype.Ask) (finished bool, err error) {
	if a.Message.Posted() || a.Message.Refused != "" {
		m.Kick(a.CallID) // someone else got there: bring it up to date
		return false, nil
	}
	if !a.PostAttempt.IsZero() {
		found, err := m.adopt(ctx, a)
		if found || err != nil {
			return found && err == nil, err
		}
	}
	if !a.State.Active() {
		m.markRendered(ctx, a) // it ended before it was shown: nothing to show
		return false, nil
	}
	r, err := waterfall.Decode(a)
	if err != nil {
		return false, err
	}
	ref, err := m.surface.Post(ctx, r)
	switch {
	case err == nil:
		return true, m.record(ctx, a, ref, a.Version)
	case m.surface.Refusal(err) != "":
		return false, m.refuse(ctx, a, ref.Conversation, m.surface.Refusal(err))
	case m.surface.RetryAfter(err) > 0:
		return false, notPosted{err}
	}
	return false, err
}

// record stores the message of a and, unless it is known to show version
// shown and nothing changed since, brings the message up to date.
func (m *Mirror) record(ctx context.Context, a *asktype.Ask, ref asktype.MessageRef, shown int64) error {
	// The message exists now: record it whatever happens to ctx. Should this
	// fail, the recorded post attempt makes the next poster find it.
	cur, err := m.st.FinishPost(context.WithoutCancel(ctx), a.CallID, m.holder, ref, shown)
	if err != nil {
		return fmt.Errorf("mirror: recording posted message %s/%s: %w", ref.Conversation, ref.ID, err)
	}
	m.log.Info("question posted", "callId", a.CallID, "channel", ref.Conversation, "ts", ref.ID)
	if cur.Rendered < cur.Version {
		m.changed(cur) // it changed while we posted, or shows an older state
	}
	return nil
}

// refuse records that the surface will never show the ask. The store ends
// an untimed ask there (its caller gets NO_PROVIDER); a timed one waits out
// its window and returns pending (seed 000), and late answers may still
// come from another surface.
func (m *Mirror) refuse(ctx context.Context, a *asktype.Ask, channel, why string) error {
	m.log.Error("the question was refused for good; not retrying", "callId", a.CallID, "channel", channel,
		"reason", why, "timed", !a.Deadline.IsZero())
	_, err := m.st.Refuse(ctx, a.CallID, channel, why, m.clock.Now())
	return err
}

// adopt looks for a message an earlier attempt posted and records it.
// found=false with a nil error means there is none: post.
func (m *Mirror) adopt(ctx context.Context, a *asktype.Ask) (bool, error) {
	r, err := waterfall.Decode(a)
	if err != nil {
		return false, err
	}
	ref, ok, err := m.surface.Find(ctx, r, a.PostAttempt)
	if err != nil {
		if m.surface.Refusal(err) != "" {
			// The surface cannot look (say, a missing scope); posting again
			// risks a duplicate, not posting loses the question. Post (an
			// ask still open), as if there were none.
			m.log.Warn("cannot look for an earlier post of the question", "callId", a.CallID, "err", err)
			return false, nil
		}
		return false, err
	}
	if !ok {
		return false, nil
	}
	m.log.Info("found the question's earlier post; adopting it", "callId", a.CallID, "ts", ref.ID)
	// It shows the ask as it was when posted, whatever that was.
	return true, m.record(ctx, a, ref, 0)
}

// Adopt records ref as the message of callID when none is recorded yet: the
// surface saw the message another way than its post's reply (a click on
// it, whose payload names the message). The post that made it records the
// same message when its reply comes; nothing is posted twice, and the
// change the click made reaches the message now. Errors are logged: the
// post's reply, or the sweep's look for it, records the message anyway.
func (m *Mirror) Adopt(ctx context.Context, callID string, ref asktype.MessageRef) {
	if known, err := m.st.Current(ctx, callID); err == nil && known.Message.Posted() {
		// The post's reply recorded it since the click read the ask (a
		// click a moment after the post): nothing to adopt, and no write
		// (this process usually holds the record already).
		return
	}
	cur, err := m.st.FinishPost(context.WithoutCancel(ctx), callID, asktype.Adopted, ref, 0)
	if err != nil {
		m.log.Warn("recording a clicked question's message failed", "callId", callID, "err", err)
		return
	}
	switch {
	case cur.Message.Conversation != ref.Conversation || cur.Message.ID != ref.ID:
		// Not recorded: another message is. The clicked one is a second
		// message of the question, which no render of the ask reaches.
		m.log.Warn("a click came from a message of the question other than its recorded one",
			"callId", callID, "clicked", ref.ID, "recorded", cur.Message.ID)
	default:
		// This call or the post's own record (its reply, or a look for
		// it) may have recorded it: the store does not say which.
		m.log.Info("a click came before the question's message was recorded; it is now", "callId", callID, "ts", ref.ID)
	}
	if cur.Rendered < cur.Version && cur.State != asktype.Open {
		// It ended before the click (the click changes nothing): show
		// that. An open ask's message is rendered by the click's own
		// transition, which now knows where the message is; rendering it
		// here too cost a second Slack call for every such click.
		m.changed(cur)
	}
}
