package service

import (
	"context"
	"log/slog"
	"time"

	"github.com/askslack/askslack/internal/startstop"
)

// service is the shape of every long-running part of the bot
// (redisstore.Store, mirror.Mirror, claims.Keeper, and serviceFuncs for the
// rest): Start runs it in the background and returns; a second Start is an
// error and Start after Stop does nothing. Stop ends it within ctx's
// budget (reporting ctx's error when that ran out); it is safe twice and
// before Start.
type service interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// phase is services started together, in order, and stopped together, in
// reverse, within one shutdown budget.
type phase struct {
	name     string
	budget   time.Duration
	services []service
}

// startPhases starts every service in order. When one fails, everything
// started so far is stopped again (in reverse) and its error returned.
func startPhases(ctx context.Context, phases []phase, log *slog.Logger) error {
	for i, p := range phases {
		for _, s := range p.services {
			if err := s.Start(ctx); err != nil {
				stopPhases(phases[:i+1], log)
				return err
			}
		}
	}
	return nil
}

// stopPhases stops the phases in reverse order, each with a budget of its
// own whatever the phases before it used up.
func stopPhases(phases []phase, log *slog.Logger) {
	for i := len(phases) - 1; i >= 0; i-- {
		p := phases[i]
		ctx, cancel := context.WithTimeout(context.Background(), p.budget)
		for j := len(p.services) - 1; j >= 0; j-- {
			if err := p.services[j].Stop(ctx); err != nil {
				log.Warn("stopping did not finish within its budget", "phase", p.name, "budget", p.budget.String(), "err", err)
			}
		}
		cancel()
	}
}

// serviceFuncs is a service made of functions, with the service shape's
// guarantees (startstop.Base). start may return a function that undoes it
// (a context's cancel), called on Stop before stop; either may be nil.
type serviceFuncs struct {
	start func(ctx context.Context) (undo func(), err error)
	stop  func(ctx context.Context) error

	life startstop.Base
	undo func() // set by start, under life's Launch
}

func (s *serviceFuncs) Start(ctx context.Context) error {
	return s.life.Launch(ctx, func(ctx context.Context) error {
		if s.start == nil {
			return nil
		}
		undo, err := s.start(ctx)
		s.undo = undo
		return err
	}, func(context.Context) {})
}

func (s *serviceFuncs) Stop(ctx context.Context) error {
	var err error
	_ = s.life.Halt(ctx, func() { // the run is a no-op: nothing to outlive ctx
		if s.undo != nil {
			s.undo()
		}
		if s.stop != nil {
			err = s.stop(ctx)
		}
	})
	return err
}
