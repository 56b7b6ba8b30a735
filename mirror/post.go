package mirror

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	holder, trusted := m.postHolder(a.CallID)
	if trusted && !a.PostAttempt.IsZero() {
		// The lease Create took for this job, unused: the attempt Create
		// recorded with it is this job's, not yet made.
		b := *a
		b.PostAttempt = time.Time{}
		a = &b
	}
	if a.Message.Refused != "" || (!a.State.Active() && a.PostAttempt.IsZero()) {
		// Nothing can be shown: the surface refused it, or it ended before
		// anyone tried. Mark it rendered so it leaves the stale index, and
		// give back the lease Create may have taken for this job. Should
		// the ask have moved on since a was read, look again.
		if !m.markRendered(ctx, a) {
			m.Kick(a.CallID)
		}
		if trusted {
			m.release(ctx, a.CallID, holder)
		}
		return
	}
	// One round trip takes the lease, reads the ask under it and records
	// the attempt; the ask comes back as it was before that. Create's own
	// lease, fresh, saves it: Create made that round trip.
	callID := a.CallID
	var err error
	if !trusted {
		a, err = m.st.BeginPost(ctx, callID, store.Hold{Holder: holder, TTL: postLease, Now: m.clock.Now()})
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return
	case errors.Is(err, store.ErrHeld) && a != nil && endedUnknown(a):
		m.findHeld(ctx, a, attempt)
		return
	case errors.Is(err, store.ErrHeld):
		// Another job is posting (another replica's, or the one the ask's
		// Create gave its lease to, whose record has not reached this
		// mirror yet); should it die, its lease runs out: look again just
		// as it does (a whole lease later left a killed replica's
		// questions unposted for up to a minute). The look does not count
		// as a failed attempt: counted, a few of them made the next real
		// failure back off a minute or more.
		m.runAfter(callID, m.heldFor(a), attempt)
		return
	case err != nil:
		m.log.Warn("taking the post lease failed; retrying", "callId", callID, "err", err)
		m.retryLater(callID, attempt)
		return
	}
	finished, err := m.postHeld(ctx, a, holder)
	var np notPosted
	switch {
	case errors.As(err, &np):
		m.abandon(ctx, a.CallID, holder) // the next attempt need not look for this one
	case !finished:
		m.release(ctx, a.CallID, holder) // FinishPost releases it on success
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
	found, err := m.adopt(ctx, a, m.newHolder()) // no lease: nothing to release
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

// abandon gives back holder's post lease and forgets its attempt
// (store.AbandonPost): a retry then posts without a Find first, which on
// Slack is a conversations.history call (Tier 3) per rate-limited post.
func (m *Mirror) abandon(ctx context.Context, callID, holder string) {
	if err := m.st.AbandonPost(context.WithoutCancel(ctx), callID, holder); err != nil {
		m.log.Warn("giving up the post lease failed", "callId", callID, "err", err)
	}
}

// release gives back holder's post lease of an ask.
func (m *Mirror) release(ctx context.Context, callID, holder string) {
	if err := m.st.Release(context.WithoutCancel(ctx), callID, leasePost, holder); err != nil {
		m.log.Warn("releasing the post lease failed", "callId", callID, "err", err)
	}
}

// PostLease implements waterfall.Poster: an ask created on this replica is
// created with its post lease held by this mirror, under a holder of its
// own that only the ask's first post job uses (keepFresh, postHolder).
func (m *Mirror) PostLease(now time.Time) asktype.PostLease {
	return asktype.PostLease{Holder: m.newHolder(), Until: now.Add(postLease)}
}

// newHolder names one post job's hold of a post lease: this mirror's
// holder and a number. Every job holds the lease under a name of its own,
// so no job of this replica takes over a lease another one holds — say,
// the lease of an ask whose Create has not returned yet while a re-sent
// request with the same callId already kicked a job (two posts).
func (m *Mirror) newHolder() string {
	return m.holder + "#" + strconv.FormatUint(m.leases.Add(1), 10)
}

// keepFresh keeps lease, the post lease an ask was created with on this
// mirror, for its first post job. A record's lease of another mirror, or
// one already kept, is ignored.
func (m *Mirror) keepFresh(callID string, lease asktype.PostLease) {
	if !strings.HasPrefix(lease.Holder, m.holder+"#") {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fresh == nil {
		m.fresh = map[string]asktype.PostLease{}
	}
	if len(m.fresh) > 1024 {
		// A lease no job took (its ask ended another way): forget it
		// once it has run out.
		now := m.clock.Now()
		for id, l := range m.fresh {
			if now.After(l.Until) {
				delete(m.fresh, id)
			}
		}
	}
	if _, ok := m.fresh[callID]; !ok {
		m.fresh[callID] = lease
	}
}

// hasFresh reports whether the ask's Create lease waits for its first job.
func (m *Mirror) hasFresh(callID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.fresh[callID]
	return ok
}

// takeFresh takes the ask's Create lease, if it waits.
func (m *Mirror) takeFresh(callID string) (asktype.PostLease, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.fresh[callID]
	delete(m.fresh, callID)
	return l, ok
}

// postHolder is who this post job holds the ask's post lease as. The
// first job of an ask created here takes the lease Create took (once:
// never a later job, which could not know whether the first one posted);
// trusted, when it has time to spare, means the job may post under it
// without BeginPost — the record it holds is what BeginPost would have
// returned, and the attempt Create recorded is its own, not yet made. A
// job that runs late takes the same lease again through BeginPost; every
// other job takes it under a name of its own.
func (m *Mirror) postHolder(callID string) (holder string, trusted bool) {
	if l, ok := m.takeFresh(callID); ok {
		return l.Holder, m.clock.Now().Before(l.Until.Add(-postLease / 2))
	}
	return m.newHolder(), false
}

// postHeld posts a (as read under the post lease). finished reports that
// FinishPost recorded a message (and released the lease); err is only for
// what a later attempt may fix.
func (m *Mirror) postHeld(ctx context.Context, a *asktype.Ask, holder string) (finished bool, err error) {
	if a.Message.Posted() || a.Message.Refused != "" {
		m.Kick(a.CallID) // someone else got there: bring it up to date
		return false, nil
	}
	if !a.PostAttempt.IsZero() {
		found, err := m.adopt(ctx, a, holder)
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
		return true, m.record(ctx, a, holder, ref, a.Version)
	case m.surface.Refusal(err) != "":
		return false, m.refuse(ctx, a, ref.Conversation, m.surface.Refusal(err))
	case m.surface.RetryAfter(err) > 0:
		return false, notPosted{err}
	}
	return false, err
}

// record stores the message of a and, unless it is known to show version
// shown and nothing changed since, brings the message up to date.
func (m *Mirror) record(ctx context.Context, a *asktype.Ask, holder string, ref asktype.MessageRef, shown int64) error {
	// The message exists now: record it whatever happens to ctx. Should this
	// fail, the recorded post attempt makes the next poster find it.
	cur, err := m.st.FinishPost(context.WithoutCancel(ctx), a.CallID, holder, ref, shown)
	if err != nil {
		return fmt.Errorf("mirror: recording posted message %s/%s: %w", ref.Conversation, ref.ID, err)
	}
	if cur.Message.ID != ref.ID {
		// The store kept it beside the message recorded before (asktype.MessageRef.Keeping).
		m.log.Warn("the question was posted a second time; both messages are kept in step", "callId", a.CallID,
			"channel", ref.Conversation, "ts", ref.ID, "recorded", cur.Message.ID)
	} else {
		m.log.Info("question posted", "callId", a.CallID, "channel", ref.Conversation, "ts", ref.ID)
	}
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
func (m *Mirror) adopt(ctx context.Context, a *asktype.Ask, holder string) (bool, error) {
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
	return true, m.record(ctx, a, holder, ref, 0)
}

// Adopt records ref as a message of callID that the surface saw another
// way than its post's reply (a click on it, whose payload names it): as
// the ask's message when none is recorded yet, or beside the recorded one
// when it is another (the ask was posted twice). Either way it is durable
// at once, so renders, and the sweep, reach it. The post that made it
// records the same message when its reply comes; nothing is posted twice,
// and the change the click made reaches the message now. Errors are
// logged: the post's reply, or the sweep's look for it, records the
// message anyway.
func (m *Mirror) Adopt(ctx context.Context, callID string, ref asktype.MessageRef) {
	if known, err := m.st.Current(ctx, callID); err == nil && known.Message.Shows(ref.Conversation, ref.ID) {
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
		m.log.Warn("a click came from a second message of the question; it is kept in step with the first",
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
