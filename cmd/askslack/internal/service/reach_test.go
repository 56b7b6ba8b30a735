package service

import (
	"strings"
	"testing"
	"time"
)

// ASKSLACK_MENTION takes ids only: a name or a channel is a startup error
// that says what to use instead.
func TestMentionConfigTakesIDsOnly(t *testing.T) {
	base := Config{BotToken: "xoxb-1", AppToken: "xapp-1", RedisPrefix: "askslack", Addr: ":8080",
		Retention: 168 * time.Hour, ClaimLease: 15 * time.Second, ReattachGrace: 30 * time.Second,
		ReadTimeout: 30 * time.Second, ShutdownGrace: time.Second, LogLevel: "info", ReconcileAfter: time.Minute, Delivery: "channel"}
	for _, ok := range [][]string{{"U0BOB"}, {"W0ENT", "S0ONCALL"}, {" U0BOB ", ""}} {
		c := base
		c.Mention = ok
		if err := c.Check(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"@bob", "bob", "C0CHANNEL", "<!channel>", "U0bob", "S"} {
		c := base
		c.Mention = []string{bad}
		err := c.Check()
		if err == nil || !strings.Contains(err.Error(), "ASKSLACK_MENTION") {
			t.Errorf("%q: %v; want an ASKSLACK_MENTION error", bad, err)
		}
	}
}

// The reach settings fail at startup with what to do, not at the first
// question.
func TestReachConfigErrorsSayWhatToDo(t *testing.T) {
	base := Config{BotToken: "xoxb-1", AppToken: "xapp-1", RedisPrefix: "askslack", Addr: ":8080",
		Retention: 168 * time.Hour, ClaimLease: 15 * time.Second, ReattachGrace: 30 * time.Second,
		ReadTimeout: 30 * time.Second, ShutdownGrace: time.Second, LogLevel: "info", ReconcileAfter: time.Minute,
		Delivery: "channel", Threads: "off"}
	for _, tc := range []struct {
		name string
		set  func(c *Config)
		want string // "" for no error
	}{
		{"both", func(c *Config) { c.Delivery = "both" }, ""},
		{"sms", func(c *Config) { c.Delivery = "sms" }, `ASKSLACK_DELIVERY "sms" must be`},
		{"threads", func(c *Config) { c.Threads = "session" }, ""},
		{"threads per channel", func(c *Config) { c.Threads = "channel" }, `ASKSLACK_THREADS "channel" must be`},
		{"remind", func(c *Config) { c.Remind, c.Escalate = []string{"15m", "1h"}, []string{"S0ONCALL"} }, ""},
		{"remind backwards", func(c *Config) { c.Remind = []string{"1h", "15m"} }, "ASKSLACK_REMIND: \"15m\" does not come after"},
		{"remind not a duration", func(c *Config) { c.Remind = []string{"hourly"} }, "ASKSLACK_REMIND: \"hourly\" is not a duration"},
		{"escalate alone", func(c *Config) { c.Escalate = []string{"S0ONCALL"} }, "ASKSLACK_ESCALATE: an escalation fires one interval after the last reminder"},
		{"escalate a name", func(c *Config) { c.Remind, c.Escalate = []string{"1h"}, []string{"@oncall"} }, `ASKSLACK_ESCALATE: "@oncall" is not a Slack user id`},
	} {
		c := base
		tc.set(&c)
		err := c.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}
