package webhook

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/askslack/askslack/waterfall"
)

// Status is what `askslack webhooks` shows of one endpoint, read from the
// store: every replica answers the same.
type Status struct {
	Name string
	// URL is the endpoint's URL, redacted (Endpoint.Redacted).
	URL string
	// Started is false until a replica has taken the endpoint on: then
	// nothing below is known yet.
	Started bool
	// Seq is the cursor: the last trail entry handled. End is the trail's
	// newest entry; Behind how many entries lie between (not all of them
	// carry an event).
	Seq, End, Behind int64
	// Lag is how long the oldest event not yet delivered has waited since
	// it happened (0 when caught up).
	Lag time.Duration
	// Holder is the replica that stored the state last (the one that
	// delivers, unless it died since).
	Holder string
	// Attempts failed so far at the event being delivered, and when the
	// next one is due (zero while nothing fails).
	Attempts    int
	NextAttempt time.Time
	LastOK      time.Time
	LastError   string
	LastErrorAt time.Time
	// Dead counts the dead letters kept; Redeliveries those queued again.
	Dead, Redeliveries int
}

// errNoEndpoint is the error of a name that is not configured.
func errNoEndpoint(name string) error {
	return waterfall.Errorf(waterfall.CodeNotFound, "no webhook endpoint named %q (ASKSLACK_WEBHOOKS)", name)
}

// Status reads every endpoint's status, in configuration order.
func (d *Dispatcher) Status(ctx context.Context) ([]Status, error) {
	now := d.now()
	_, end, err := d.st.AuditEnd(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(d.eps))
	for _, ep := range d.eps {
		s := Status{Name: ep.Name, URL: ep.Redacted(), End: end}
		dead, err := d.st.ListRange(ctx, deadKey(ep.Name), 0, now)
		if err != nil {
			return nil, err
		}
		redo, err := d.st.ListRange(ctx, redoKey(ep.Name), 0, now)
		if err != nil {
			return nil, err
		}
		s.Dead, s.Redeliveries = len(dead), len(redo)
		raw, err := d.st.Remember(ctx, stateKey(ep.Name), "", stateTTL, now)
		if err != nil {
			return nil, err
		}
		var st state
		if raw == "" || json.Unmarshal([]byte(raw), &st) != nil || st.URL != ep.urlHash() {
			out = append(out, s)
			continue
		}
		s.Started, s.Seq, s.Behind, s.Holder = true, st.Seq, max(0, end-st.Seq), st.Holder
		s.LastOK, s.LastError, s.LastErrorAt = st.LastOK, st.LastError, st.LastErrorAt
		switch {
		case st.Head != nil:
			s.Attempts, s.NextAttempt, s.Lag = st.Head.Attempts, st.Head.Next, now.Sub(st.Head.At)
		case s.Behind > 0:
			if es, err := d.st.AuditFrom(ctx, st.Pos, 1); err == nil && len(es) > 0 {
				s.Lag = now.Sub(es[0].At)
			}
		}
		s.Lag = max(0, s.Lag)
		out = append(out, s)
	}
	return out, nil
}

// DeadLetters lists the endpoint's dead letters, oldest first.
func (d *Dispatcher) DeadLetters(ctx context.Context, name string) ([]Letter, error) {
	if d.endpoint(name) == nil {
		return nil, errNoEndpoint(name)
	}
	raws, err := d.st.ListRange(ctx, deadKey(name), 0, d.now())
	if err != nil {
		return nil, err
	}
	out := make([]Letter, 0, len(raws))
	for _, raw := range raws {
		var l Letter
		if json.Unmarshal([]byte(raw), &l) == nil {
			out = append(out, l)
		}
	}
	return out, nil
}

// Redeliver queues the endpoint's dead letters with the given ids (every
// one when ids is empty) for delivery again, before the trail's next
// events, with the same ids and bodies, and returns how many it queued.
// An id that is not a dead letter of the endpoint is NOT_FOUND (nothing is
// queued then). Each letter is added to the redelivery list before it
// leaves the dead letters: a crash between the two leaves it in both, and
// it is sent again at most once more.
func (d *Dispatcher) Redeliver(ctx context.Context, name string, ids []string) (int, error) {
	ep := d.endpoint(name)
	if ep == nil {
		return 0, errNoEndpoint(name)
	}
	now := d.now()
	raws, err := d.st.ListRange(ctx, deadKey(name), 0, now)
	if err != nil {
		return 0, err
	}
	var picked []string
	found := map[string]bool{}
	for _, raw := range raws {
		var l Letter
		if json.Unmarshal([]byte(raw), &l) != nil {
			continue
		}
		if len(ids) == 0 || slices.Contains(ids, l.ID) {
			picked, found[l.ID] = append(picked, raw), true
		}
	}
	for _, id := range ids {
		if !found[id] {
			return 0, waterfall.Errorf(waterfall.CodeNotFound, "no dead letter %q at endpoint %s (askslack webhooks dead %s)", id, name, name)
		}
	}
	n := 0
	for _, raw := range picked {
		if err := d.st.ListPush(ctx, redoKey(name), raw, 2*d.opts.MaxDead, d.opts.DeadTTL, now); err != nil {
			return n, err
		}
		took, err := d.st.ListRemove(ctx, deadKey(name), raw, now)
		if err != nil {
			return n, err
		}
		if !took { // another redelivery moved it meanwhile: undo ours
			if _, err := d.st.ListRemove(ctx, redoKey(name), raw, now); err != nil {
				return n, err
			}
			continue
		}
		n++
	}
	if n > 0 {
		select {
		case ep.kick <- struct{}{}:
		default:
		}
	}
	return n, nil
}
