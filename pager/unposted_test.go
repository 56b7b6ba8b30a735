package pager_test

import (
	"context"
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/pagerfake"
	"github.com/askslack/askslack/pager"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// A page that went before its reminders could be posted (their channel
// had no turn for them) says so, to both providers: the on-call must not
// assume Slack reminded anyone. A page after every reminder says nothing
// of them.
func TestAPageSaysWhichRemindersWereNotPosted(t *testing.T) {
	for _, provider := range []string{"pagerduty", "opsgenie"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			st, f := store.NewMemory(0, nil), pagerfake.New(pagerfake.Options{RoutingKey: routingKey, APIKey: "genie-key"})
			defer f.Close()
			var p pager.Pager = pager.NewPagerDuty(routingKey, fast(f, nil))
			if provider == "opsgenie" {
				p = pager.NewOpsgenie("genie-key", fast(f, nil))
			}
			e := replica(t, st, p, pager.EscalationOptions{})
			ctx := context.Background()
			missed := waterfall.Nudge{Step: 3, Steps: 3, Waited: nudge.Waited, Unposted: 1}
			if err := e.Escalate(ctx, create(t, st, "missed", ""), missed); err != nil {
				t.Fatal(err)
			}
			if err := e.Escalate(ctx, create(t, st, "all", ""), nudge); err != nil {
				t.Fatal(err)
			}
			evs := f.Events()
			if len(evs) != 2 {
				t.Fatalf("events %+v; want two pages", evs)
			}
			const want = "1 of 2 not posted in Slack by the page's time"
			if s, _ := evs[0].Details["reminders"].(string); !strings.HasPrefix(s, want) {
				t.Errorf("the page's details say %q of its reminders; want %q…", s, want)
			}
			if provider == "opsgenie" && !strings.Contains(string(evs[0].Body), "Reminders: "+want) {
				t.Errorf("the alert's description does not say it: %s", evs[0].Body)
			}
			if _, ok := evs[1].Details["reminders"]; ok || strings.Contains(string(evs[1].Body), "not posted") {
				t.Errorf("a page after every reminder speaks of unposted ones: %s", evs[1].Body)
			}
		})
	}
}
