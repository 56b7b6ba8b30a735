package service

import (
	"strings"
	"testing"
	"time"
)

func TestSlackTimeScaleIsChecked(t *testing.T) {
	base := Config{BotToken: "xoxb-1", AppToken: "xapp-1", RedisPrefix: "askslack", Addr: ":8080",
		Retention: 168 * time.Hour, ClaimLease: 15 * time.Second, ReattachGrace: 30 * time.Second,
		ReadTimeout: 30 * time.Second, ShutdownGrace: time.Second, LogLevel: "info", ReconcileAfter: time.Minute,
		Delivery: "channel", Threads: "off"}
	for _, tc := range []struct {
		scale float64
		bad   bool
	}{{0, false}, {1, false}, {20, false}, {1000, false}, {0.5, true}, {-1, true}, {5000, true}} {
		c := base
		c.SlackTimeScale = tc.scale
		err := c.Check()
		if got := err != nil && strings.Contains(err.Error(), "ASKSLACK_SLACK_TIME_SCALE"); got != tc.bad {
			t.Errorf("scale %v: %v; want refused=%v", tc.scale, err, tc.bad)
		}
	}
}
