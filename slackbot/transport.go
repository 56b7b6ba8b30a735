package slackbot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/askslack/askslack/internal/startstop"
)

// Dispatcher handles one interaction and returns its ack payload. *Bot is
// the one implementation; both transports feed it the same way.
type Dispatcher interface {
	Handle(ctx context.Context, ic *slack.InteractionCallback) any
}

// maxBody bounds an interaction request; real payloads are a few kB.
const maxBody = 1 << 20

// HTTPHandler serves POST /slack/interactions, POST /slack/events and
// POST /slack/commands in HTTP mode (events and commands reach d when it
// is also an EventHandler / CommandHandler). Every request must carry Slack's v0 signature over the raw
// body with a timestamp within 5 minutes; anything else is 401 and changes
// nothing.
func HTTPHandler(d Dispatcher, signingSecret string, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /slack/interactions", interactions(d, signingSecret, log))
	mux.HandleFunc("POST /slack/events", events(d, signingSecret, log))
	mux.HandleFunc("POST /slack/commands", commands(d, signingSecret, log))
	return mux
}

func interactions(d Dispatcher, signingSecret string, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := verified(w, r, signingSecret, log)
		if !ok {
			return
		}
		ic, err := parseInteraction(body)
		if err != nil {
			http.Error(w, "bad payload", http.StatusBadRequest)
			return
		}
		// Settling is idempotent, so a retried delivery (X-Slack-Retry-Num)
		// is handled like the first and changes nothing twice.
		writeAck(w, d.Handle(r.Context(), ic))
	}
}

func events(d Dispatcher, signingSecret string, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := verified(w, r, signingSecret, log)
		if !ok {
			return
		}
		ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
		if err != nil {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		if ev.Type == slackevents.URLVerification {
			var c slackevents.ChallengeResponse
			_ = json.Unmarshal(body, &c)
			writeAck(w, c)
			return
		}
		// Acknowledged once queued: the work runs on the bot's pool, and a
		// redelivery (X-Slack-Retry-Num) is dropped by its event id.
		if eh, ok := d.(EventHandler); ok {
			eh.HandleEvent(r.Context(), body)
		}
		w.WriteHeader(http.StatusOK)
	}
}

func commands(d Dispatcher, signingSecret string, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := verified(w, r, signingSecret, log)
		if !ok {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		cmd, err := slack.SlashCommandParse(r)
		if err != nil {
			http.Error(w, "bad command", http.StatusBadRequest)
			return
		}
		ch, ok := d.(CommandHandler)
		if !ok {
			w.WriteHeader(http.StatusOK)
			return
		}
		writeAck(w, ch.HandleCommand(r.Context(), cmd))
	}
}

// verified reads the body and checks Slack's signature; on failure it has
// already answered 401.
func verified(w http.ResponseWriter, r *http.Request, secret string, log *slog.Logger) ([]byte, bool) {
	body, err := readBody(w, r)
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	sv, err := slack.NewSecretsVerifier(r.Header, secret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		log.Warn("rejected unsigned or stale Slack request", "path", r.URL.Path, "err", err)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

// readBody reads at most maxBody bytes, in one allocation when the sender
// said how many (Slack does): io.ReadAll would grow its buffer step by step.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, maxBody)
	if n := r.ContentLength; n > 0 && n <= maxBody {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}

func writeAck(w http.ResponseWriter, ack any) {
	if ack == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(ack)
}

// Socket runs Socket Mode: one WebSocket per replica (Slack allows 10 per
// app and delivers each payload to one of them).
type Socket struct {
	// OnFatal, when set, is told when Slack refuses the app token (the
	// runner then stops); the binary stops with it.
	OnFatal func(error)

	life      startstop.Base
	client    *socketmode.Client
	d         Dispatcher
	log       *slog.Logger
	connected atomic.Bool
	failing   atomic.Bool // a connection attempt failed since the last success
}

// NewSocket returns a Socket Mode runner for api (which must carry the app
// token, slack.OptionAppLevelToken).
func NewSocket(api *slack.Client, d Dispatcher, log *slog.Logger) *Socket {
	return &Socket{client: socketmode.New(api), d: d, log: log}
}

// Connected reports whether the WebSocket is up (for /readyz).
func (s *Socket) Connected() bool { return s.connected.Load() }

// Start connects and dispatches in the background until Stop, or until
// Slack refuses the token (OnFatal is told).
func (s *Socket) Start(ctx context.Context) error {
	return s.life.Launch(ctx, nil, func(ctx context.Context) {
		if err := s.run(ctx); err != nil && s.OnFatal != nil {
			s.OnFatal(fmt.Errorf("socket mode: %w", err))
		}
	})
}

// Stop disconnects, waiting for the runner until ctx ends.
func (s *Socket) Stop(ctx context.Context) error {
	return s.life.Halt(ctx, nil)
}

// run connects and dispatches until ctx ends or Slack refuses the token.
func (s *Socket) run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.client.RunContext(ctx) }()
	for {
		select {
		case err := <-errc:
			s.connected.Store(false)
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		case evt, ok := <-s.client.Events:
			if !ok {
				return <-errc
			}
			s.event(ctx, evt)
		}
	}
}

func (s *Socket) event(ctx context.Context, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnected, socketmode.EventTypeHello:
		s.connected.Store(true)
		if s.failing.CompareAndSwap(true, false) {
			s.log.Info("Slack Socket Mode connected again")
		}
	case socketmode.EventTypeConnectionError:
		// slack-go retries with backoff; say why every time.
		s.connected.Store(false)
		s.failing.Store(true)
		if e, ok := evt.Data.(*slack.ConnectionErrorEvent); ok {
			s.log.Warn("Slack Socket Mode connection failed; retrying", "attempt", e.Attempt, "retryIn", e.Backoff, "err", e.ErrorObj)
		} else {
			s.log.Warn("Slack Socket Mode connection failed; retrying", "event", evt.Data)
		}
	case socketmode.EventTypeConnecting, socketmode.EventTypeDisconnect:
		s.connected.Store(false)
	case socketmode.EventTypeInvalidAuth:
		s.connected.Store(false)
		s.log.Error("Slack refused the app-level token (SLACK_APP_TOKEN)")
	case socketmode.EventTypeInteractive:
		ic, ok := evt.Data.(slack.InteractionCallback)
		if !ok || evt.Request == nil {
			return
		}
		if err := s.client.AckCtx(ctx, evt.Request.EnvelopeID, s.d.Handle(ctx, &ic)); err != nil {
			s.log.Warn("Socket Mode ack failed", "envelope", evt.Request.EnvelopeID, "err", err)
		}
	case socketmode.EventTypeEventsAPI:
		s.eventsAPI(ctx, evt)
	case socketmode.EventTypeSlashCommand:
		s.slashCommand(ctx, evt)
	}
}

// eventsAPI acknowledges an events_api envelope and hands its payload (the
// same event_callback JSON HTTP mode gets) to the dispatcher.
func (s *Socket) eventsAPI(ctx context.Context, evt socketmode.Event) {
	if evt.Request == nil {
		return
	}
	if err := s.client.AckCtx(ctx, evt.Request.EnvelopeID, nil); err != nil {
		s.log.Warn("Socket Mode ack failed", "envelope", evt.Request.EnvelopeID, "err", err)
	}
	if eh, ok := s.d.(EventHandler); ok {
		eh.HandleEvent(ctx, evt.Request.Payload)
	}
}

// slashCommand answers a slash_commands envelope: its ack carries the
// immediate response.
func (s *Socket) slashCommand(ctx context.Context, evt socketmode.Event) {
	if evt.Request == nil {
		return
	}
	var ack any
	cmd, ok := evt.Data.(slack.SlashCommand)
	if ch, isCH := s.d.(CommandHandler); ok && isCH {
		ack = ch.HandleCommand(ctx, cmd)
	}
	if err := s.client.AckCtx(ctx, evt.Request.EnvelopeID, ack); err != nil {
		s.log.Warn("Socket Mode ack failed", "envelope", evt.Request.EnvelopeID, "err", err)
	}
}
