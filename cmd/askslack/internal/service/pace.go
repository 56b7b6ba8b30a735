package service

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/mirror"
	"github.com/askslack/askslack/waterfall"
)

// pace is the mirror's pacing (ASKSLACK_SLACK_PACING), nil when off: posts
// are paced per channel the ask names (or ASKSLACK_CHANNEL); a question
// routed to a principal's DMs shares its channel's budget, a little
// slower than Slack requires.
func (a *App) pace() *mirror.Pace {
	if !a.cfg.SlackPacing {
		return nil
	}
	return &mirror.Pace{Scale: a.cfg.SlackTimeScale, Channel: func(ask *asktype.Ask) string {
		req, err := waterfall.DecodeRequest(ask)
		if err != nil {
			return ""
		}
		return a.surface.ChannelFor(req)
	}}
}

// watchQueue reports the mirror's Slack queue at scrape time.
func (m *metrics) watchQueue(depth func() (int, time.Duration)) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "askslack_slack_queue_depth",
			Help: "Posts and updates this replica holds waiting for Slack's rate limits (ASKSLACK_SLACK_PACING).",
		}, func() float64 { n, _ := depth(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "askslack_slack_queue_oldest_seconds",
			Help: "How long the oldest post or update waiting for Slack's rate limits on this replica has waited.",
		}, func() float64 { _, d := depth(); return d.Seconds() }),
	)
}
