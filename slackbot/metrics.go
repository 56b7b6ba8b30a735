package slackbot

import "time"

// Metrics receives what the bot counts; cmd/askslack backs it with
// Prometheus.
type Metrics interface {
	// SlackCall records one Web API call (after retries) and its result
	// ("ok" or Slack's error string).
	SlackCall(method, result string, took time.Duration)
	// RateLimited records a 429 from Slack.
	RateLimited(method string)
	// Interaction records one interaction: kind (block_actions,
	// view_submission, …) and result (settled, duplicate, refused, invalid,
	// ignored, error).
	Interaction(kind, result string)
	// Panic records a panic recovered in a job or handler ("job",
	// "interaction").
	Panic(where string)
}

type noMetrics struct{}

func (noMetrics) SlackCall(string, string, time.Duration) {}
func (noMetrics) RateLimited(string)                      {}
func (noMetrics) Interaction(string, string)              {}
func (noMetrics) Panic(string)                            {}
