package loadbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A burst (`askslack bench --slack-limits`): Agents agents in Sessions
// sessions each ask one question within Spread, session after session (a
// CI fan-out: one session's jobs ask together), spread over the bots at
// Bases. Half the sessions ask into the default channel, the other half
// each into its own DM channel. By its place in its session an ask is
// answered at once, timed (never answered: pending when its window
// closes), or answered late (after the reminders' offsets).

// Burst kinds, by an agent's place in its session (i%4).
const (
	BurstAnswered = "now"   // clicked as soon as it is posted
	BurstTimed    = "timed" // timed, never clicked: pending at its deadline
	BurstLate     = "late"  // clicked LateClick after it is posted
)

// BurstKind is the kind of the i-th agent of a session.
func BurstKind(i int) string {
	switch i % 4 {
	case 2:
		return BurstTimed
	case 3:
		return BurstLate
	}
	return BurstAnswered
}

// BurstCallKind reads the kind back from a burst call id.
func BurstCallKind(callID string) string {
	_, k, _ := strings.Cut(callID, "=")
	return k
}

// BurstOptions configure a burst.
type BurstOptions struct {
	Bases    []string // the bots
	RunID    string
	Agents   int
	Sessions int
	Spread   time.Duration // the asks start evenly over it
	Window   time.Duration // timed asks' window
	// DMChannel names the DM channel of session s (sessions in the second
	// half ask there); "" sends every session to the default channel.
	DMChannel func(session int) string
	Limit     time.Duration // bound on the whole burst
	// Skew reshapes the burst as one busy session and some small ones on
	// different replicas: session 0 asks two thirds of the questions at
	// once through Bases[0]; SkewDelay later the other sessions ask the
	// rest, round robin, through Bases[1] — all into the default channel.
	Skew      bool
	SkewDelay time.Duration
}

// BusySession is the skewed burst's busy session.
func BusySession(runID string) string { return fmt.Sprintf("bench-%s-s0", runID) }

// BurstAsk is one agent's ask and what became of it.
type BurstAsk struct {
	CallID, Session, Channel, Kind string // Channel "" is the default
	Start, End                     time.Time
	Answered, Pending              bool
	Err                            error
}

// Burst runs the agents and returns every ask.
func Burst(ctx context.Context, o BurstOptions) []BurstAsk {
	client := &http.Client{Transport: Transport(o.Agents), Timeout: o.Limit}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, o.Limit)
	defer cancel()
	per := max(1, o.Agents/o.Sessions)
	asks := make([]BurstAsk, o.Agents)
	var wg sync.WaitGroup
	begin := time.Now()
	busy := o.Agents * 2 / 3
	for j := range o.Agents {
		s, i := min(j/per, o.Sessions-1), j%per
		base := o.Bases[j%len(o.Bases)]
		at := begin.Add(time.Duration(j) * o.Spread / time.Duration(o.Agents))
		if o.Skew {
			s, i, base, at = 0, j, o.Bases[0], begin
			if j >= busy {
				k := j - busy
				s, i, base, at = 1+k%max(1, o.Sessions-1), k/max(1, o.Sessions-1), o.Bases[len(o.Bases)-1], begin.Add(o.SkewDelay)
			}
		}
		a := &asks[j]
		a.Kind = BurstKind(i)
		if o.Skew {
			a.Kind = BurstAnswered
		}
		a.Session = fmt.Sprintf("bench-%s-s%d", o.RunID, s)
		a.CallID = fmt.Sprintf("%s-s%d-%d=%s", o.RunID, s, i, a.Kind)
		if o.DMChannel != nil && s >= o.Sessions/2 && !o.Skew {
			a.Channel = o.DMChannel(s)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sleep(ctx, time.Until(at))
			a.Start = time.Now()
			w := time.Duration(0)
			if a.Kind == BurstTimed {
				w = o.Window
			}
			a.Answered, a.Pending, a.Err = burstAsk(ctx, client, base, a, w)
			a.End = time.Now()
		}()
	}
	wg.Wait()
	return asks
}

func burstAsk(ctx context.Context, client *http.Client, base string, a *BurstAsk, window time.Duration) (answered, pending bool, err error) {
	body := bytes.TrimSuffix(askBody(a.CallID, a.Session), []byte("}"))
	if a.Channel != "" {
		body = append(body, []byte(`,"channel":"`+a.Channel+`"`)...)
	}
	if window > 0 {
		body = append(body, []byte(`,"timeoutMs":`+strconv.FormatInt(window.Milliseconds(), 10))...)
	}
	body = append(body, '}')
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/asks", bytes.NewReader(body))
	if err != nil {
		return false, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return false, false, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return false, false, err
	}
	if resp.StatusCode != http.StatusOK {
		return false, false, fmt.Errorf("POST /v1/asks: %s: %s", resp.Status, bytes.TrimSpace(out))
	}
	var res struct {
		Answers []json.RawMessage `json:"answers"`
		Pending bool              `json:"pending"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return false, false, fmt.Errorf("POST /v1/asks: %w", err)
	}
	return len(res.Answers) > 0, res.Pending, nil
}
