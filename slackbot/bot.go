// Package slackbot is the Slack side of askslack: the Slack Surface the
// message mirror posts and updates through, the answerer that claims asks
// for Slack, the interaction dispatcher that turns clicks and modal
// submissions into answers, who may answer, and the two transports (Socket
// Mode, HTTP) that feed it. It is the only package that holds a Slack client.
package slackbot

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/startstop"
	"github.com/askslack/askslack/internal/workpool"
	"github.com/askslack/askslack/rules"
	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/workspace"
)

// Options configure a Bot.
type Options struct {
	// Channel is where notices go unless they name their own.
	Channel string
	// TimeScale: as SurfaceOptions.TimeScale.
	TimeScale float64
	Logger    *slog.Logger
	// Workers bounds the background work of interactions (block actions),
	// and, apart, what clickers are told (ephemerals). Default 8 each.
	// Message updates run on the mirror's own workers, so a click never
	// waits behind them, nor behind ephemerals.
	Workers int
	// Authorizer decides who may answer; nil lets everyone in the channel.
	Authorizer Authorizer
	// Metrics receives counts; nil records nothing.
	Metrics Metrics
	// Mirror is told of a message seen with stale controls (a click on an
	// answered question), to bring it up to date; nil does nothing.
	Mirror Kicker
	// Directory finds the questions a person may answer, dedupes events
	// and remembers Home tab visitors (the store); nil turns /askslack
	// list, App Home and answering by mention off.
	Directory Directory
	// ClickURLs, when set, keeps each answering click's response_url for
	// the Surface holding the same book (clickurl.go); nil: updates go by
	// chat.update only.
	ClickURLs *ClickURLs
	// Workspaces, when one deployment serves several, resolves every
	// payload to its workspace (workspace.go) and Uninstaller hears of
	// installations gone; nil with one workspace.
	Workspaces  *Workspaces
	Uninstaller Uninstaller
}

// Kicker queues an ask's message job (mirror.Mirror).
type Kicker interface{ Kick(callID string) }

// Adopter records the message of a question seen another way than its
// post's reply: a click on it (its channel and ts are in the signed
// payload) that came before the reply did. The Kicker may implement it
// (mirror.Mirror does).
type Adopter interface {
	Adopt(ctx context.Context, callID string, ref asktype.MessageRef)
}

type noKicker struct{}

func (noKicker) Kick(string) {}

// Host is what the Slack surface asks of the domain (engine.Host): read
// asks, answer them, record refused clicks, and the standing rules and
// figures its views show. Everything it takes and returns is a domain type.
type Host interface {
	Now() time.Time
	Get(ctx context.Context, callID string) (*waterfall.Record, error)
	Current(ctx context.Context, callID string) (*waterfall.Record, error)
	Active(ctx context.Context, limit int) ([]*waterfall.Record, error)
	Answer(ctx context.Context, callID string, ans waterfall.Answer, who waterfall.Respondent) (waterfall.Outcome, error)
	// AnswerRecord is Answer on the ask as the caller read it (a click
	// read against its ask): not read or decoded again.
	AnswerRecord(ctx context.Context, r *waterfall.Record, ans waterfall.Answer, who waterfall.Respondent) (waterfall.Outcome, error)
	Refused(ctx context.Context, r waterfall.Refusal)
	Stats(ctx context.Context, since time.Time) (waterfall.Stats, error)
	Rules(ctx context.Context) ([]asktype.Rule, error)
	GrantRule(ctx context.Context, callID string, g waterfall.Grant, who waterfall.Respondent) (asktype.Rule, error)
	RevokeRule(ctx context.Context, id int64, who waterfall.Respondent) (asktype.Rule, error)
	Preview(ctx context.Context, r rules.Rule, limit int) ([]asktype.RecentAsk, int, error)
}

// Bot takes answers from Slack: it dispatches interactions (clicks, modal
// submissions) to the Host, opens modals and tells people what happened.
type Bot struct {
	life    startstop.Base
	api     API
	host    Host
	channel string
	log     *slog.Logger
	pool    *workpool.Pool
	// tells runs what a clicker is told (ephemerals): Slack calls that may
	// take seconds under a slow or failing Slack, on workers of their own,
	// so a settling click never waits behind them (the paced chaos run: a
	// burst of "already answered" ephemerals held every click's settle back
	// for minutes).
	tells   *workpool.Pool
	authz   Authorizer
	metrics Metrics
	caller  caller // metrics and time scale of Slack calls
	mirror  Kicker
	dir     Directory
	rounds  homeRounds // Home tab refreshes (home.go)
	stats   homeStats  // the Home tabs' summary of answers (stats.go)

	rules *RuleSettings // standing rules (rules.go); nil: off
	// agents are the people's connected agents (agents.go); nil: off.
	agents Agents

	clickURLs *ClickURLs // nil: none kept

	// ws: the workspaces served when there are several (workspace.go); nil: one.
	ws          *Workspaces
	uninstaller Uninstaller // nil: one workspace
}

// New returns a Bot answering through host.
func New(api API, host Host, opts Options) *Bot {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.Authorizer == nil {
		opts.Authorizer = Everyone{}
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	if opts.Mirror == nil {
		opts.Mirror = noKicker{}
	}
	b := &Bot{api: api, host: host, channel: opts.Channel, log: opts.Logger, authz: opts.Authorizer, metrics: opts.Metrics, caller: caller{opts.Metrics, opts.TimeScale}, mirror: opts.Mirror, dir: opts.Directory, clickURLs: opts.ClickURLs, ws: opts.Workspaces, uninstaller: opts.Uninstaller}
	b.pool = workpool.New(opts.Workers, func(r any, stack []byte) { b.panicked("job", r, stack) })
	b.tells = workpool.New(opts.Workers, func(r any, stack []byte) { b.panicked("tell", r, stack) })
	return b
}

// panicked logs a recovered panic with its stack and counts it: hostile
// input must never kill the process.
func (b *Bot) panicked(where string, r any, stack []byte) {
	b.log.Error("recovered from a panic", "where", where, "panic", fmt.Sprint(r), "stack", string(stack))
	b.metrics.Panic(where)
}

// Start is the service shape's: the Bot's work arrives with interactions
// (its pool runs from New), so there is nothing to launch.
func (b *Bot) Start(ctx context.Context) error {
	return b.life.Launch(ctx, nil, func(context.Context) {})
}

// Stop waits for queued interaction work to finish (bounded by ctx). Safe
// twice and before Start.
func (b *Bot) Stop(ctx context.Context) error {
	_ = b.life.Halt(ctx, func() {
		b.pool.Stop(ctx)
		b.tells.Stop(ctx)
	})
	return ctx.Err()
}

// view is what the message of a shows now (for modals opened from it).
func (b *Bot) view(a *waterfall.Record) waterfall.View { return view(a, b.host.Now()) }

// call runs one Web API call with retries and records its outcome.
func (b *Bot) call(ctx context.Context, method string, f func(ctx context.Context) error) error {
	return call(ctx, b.caller, defaultRetry, method, f)
}

// resultOf labels a call's result for metrics: "ok" or Slack's error.
func resultOf(err error) string {
	if err == nil {
		return "ok"
	}
	if s := SlackError(err); s != "" {
		return s
	}
	return "error"
}

func msgOptions(m blocks.Message) []slack.MsgOption {
	return []slack.MsgOption{
		slack.MsgOptionText(m.Text, false),
		slack.MsgOptionBlocks(m.Blocks...),
		slack.MsgOptionDisableLinkUnfurl(),
		slack.MsgOptionDisableMediaUnfurl(),
	}
}

// refused records a refused click in the audit trail before the person
// is told (the work of a click runs in the background already).
func (b *Bot) refused(ctx context.Context, r waterfall.Refusal) { b.host.Refused(ctx, r) }

// ephemeral tells one user something only they see, in the background.
func (b *Bot) ephemeral(from context.Context, channel, user, text string) {
	if channel == "" || user == "" {
		return
	}
	b.tells.Submit("", func(ctx context.Context) {
		ctx = workspace.Carry(ctx, from)
		err := b.call(ctx, "chat.postEphemeral", func(ctx context.Context) error {
			_, err := b.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(text, false))
			return err
		})
		if err != nil {
			b.log.Warn("ephemeral message failed", "channel", channel, "user", user, "slackError", SlackError(err), "err", err)
		}
	})
}
