package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/pagerfake"
	"github.com/askslack/askslack/internal/slackfake"
)

// Issue 43, item 2: a burst of questions spends their channel's posting
// budget (the fake enforces Slack's own limits, one chat.postMessage a
// second per channel, and the bot paces to them), and each ask's
// reminders and page still keep to the configured ladder: a reminder
// waits only for its turn at the front of the channel's queue and is
// posted on its rung (at or after its offset, before the next step's),
// never after its page's time; the page goes within 2 s of its due time,
// whether or not the reminders before it could be posted, and says so
// when one could not. Before: pages at 19.5, 19.5 and 69 s (the third
// ask's reminders never sent), and at 64 s instead of about 5 s.
func TestE2EEscalationKeepsItsLadderInABusyChannel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		remind string
		asks   int
		ladder []time.Duration // the reminders' offsets
		page   time.Duration
		// allSent: the channel's budget has room for every reminder on
		// its rung; otherwise a reminder may be dropped for its page.
		allSent bool
	}{
		{"three asks at 6s,12s", "6s,12s", 3, []time.Duration{6 * time.Second, 12 * time.Second}, 18 * time.Second, true},
		{"four asks at 2s", "2s", 4, []time.Duration{2 * time.Second}, 4 * time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			pages := pagerfake.New(pagerfake.Options{RoutingKey: pageKey})
			defer pages.Close()
			d := newDeployment(t, false)
			slack := slackfake.New(slackfake.Options{
				BotToken: "xoxb-test", AppToken: "xapp-test", SigningSecret: testSecret,
				Users: []slackfake.User{alice, bob, carol}, RateLimits: 1, // Slack's own pace
			})
			if err := slack.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(slack.Close)
			d.fake = slack
			d.env["ASKSLACK_SLACK_PACING"] = "true"
			pagerEnv(d, pages, "pagerduty")
			d.env["ASKSLACK_REMIND"] = c.remind
			b := d.start(viaHTTP)

			// The burst: every question at once, into one channel.
			created := map[string]time.Time{}
			var ids []string
			for i := range c.asks {
				id := fmt.Sprintf("busy-%d-%d", c.asks, i)
				st, err := b.client().Open(ctx, oneQuestion(id, "Yes", "No"))
				if err != nil {
					t.Fatal(err)
				}
				ids, created[id] = append(ids, id), st.Created
			}
			for _, id := range ids {
				waitEvents(t, ctx, pages, "trigger", "askslack/"+id, 1)
			}
			// Every reminder is accounted for: posted, or dropped for its
			// page (the metrics count each once).
			want := c.asks * len(c.ladder)
			if err := waitFor(ctx, func() bool {
				return metricInt(b, `askslack_reminders_total{kind="reminder",result="sent"}`)+
					metricInt(b, `askslack_reminders_total{kind="reminder",result="dropped"}`) >= want
			}); err != nil {
				t.Errorf("the reminders were not all sent or dropped: %v", err)
			}

			for _, id := range ids {
				msg := waitPosted(t, ctx, slack, id)
				var reminders []time.Time
				for _, call := range slack.Calls("chat.postMessage") {
					if call.OK() && call.Params["thread_ts"] == msg.TS && call.Params["channel"] == msg.Channel {
						reminders = append(reminders, call.At)
					}
				}
				var page pagerfake.Event
				for _, e := range pages.Events() {
					if e.Action == "trigger" && e.DedupKey == "askslack/"+id {
						page = e
					}
				}
				since := func(at time.Time) string { return at.Sub(created[id]).Round(100 * time.Millisecond).String() }
				var got []string
				for _, r := range reminders {
					got = append(got, since(r))
				}
				posted := time.Time{}
				for _, call := range slack.Calls("chat.postMessage") {
					if call.OK() && call.Params["thread_ts"] == "" && strings.Contains(call.Params["blocks"], "ask/"+id+"/") {
						posted = call.At
					}
				}
				t.Logf("%s: posted at %s, reminders at %v, paged at %s (due %s; reminders due %v); page details %v",
					id, since(posted), got, since(page.At), c.page, c.ladder, page.Details)

				if late := page.At.Sub(created[id].Add(c.page)); late < 0 || late > 2*time.Second {
					t.Errorf("%s: paged %s after its due time; want within 2s", id, late)
				}
				if len(reminders) > len(c.ladder) || (c.allSent && len(reminders) != len(c.ladder)) {
					t.Errorf("%s: %d reminders; want %d", id, len(reminders), len(c.ladder))
				}
				// Each reminder on its rung: the k-th posted at or after the
				// k-th offset and before the next step (the page's time for
				// the last).
				for k, r := range reminders {
					next := c.page
					if k+1 < len(c.ladder) {
						next = c.ladder[k+1]
					}
					if at := r.Sub(created[id]); at < c.ladder[k] || at >= next {
						t.Errorf("%s: reminder %d posted at %s; want from %s, before %s", id, k+1, since(r), c.ladder[k], next)
					}
				}
				if len(reminders) < len(c.ladder) {
					if s, _ := page.Details["reminders"].(string); !strings.Contains(s, "not posted") {
						t.Errorf("%s: %d of %d reminders posted, and the page does not say so: %v", id, len(reminders), len(c.ladder), page.Details)
					}
				}
			}
		})
	}
}

// metricInt is the value of one metric series (name with its labels, in
// the exposition's order), 0 when absent.
func metricInt(b *bot, series string) int {
	v, err := strconv.ParseFloat(metricValue(b, series), 64)
	if err != nil {
		return 0
	}
	return int(v)
}

// waitFor polls cond every 100 ms until it holds or ctx ends: for what only
// an outside read (a metrics scrape) can tell.
func waitFor(ctx context.Context, cond func() bool) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
