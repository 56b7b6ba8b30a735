package waterfall

import (
	"context"
	"errors"
)

// ErrClaimed is what an answerer returns when it has taken the request but
// its answer arrives later by another way — through Host.Answer, on any
// replica (a person clicking in Slack). The chain stops there and the Host
// waits for the answer in the store, so the answerer holds no goroutine
// while the question is open.
var ErrClaimed = errors.New("waterfall: claimed; the answer comes through Host.Answer")

// Next delegates a request to the rest of the chain.
type Next func(ctx context.Context) (Settlement, error)

// Answerer is one link of the 'user-questions/request' waterfall: it returns
// a settlement to claim the request, or calls next to delegate it. An
// answerer that cannot route a request must call next rather than fail, so a
// later answerer (or the NO_PROVIDER tail) decides.
//
// Answer blocks until the request is answered, ctx ends, or it delegates —
// or returns ErrClaimed at once when the answer will come through
// Host.Answer. ctx ending does not withdraw the question: the Host decides
// that.
type Answerer interface {
	Answer(ctx context.Context, req *Request, next Next) (Settlement, error)
}

// AnswererFunc adapts a function to Answerer.
type AnswererFunc func(ctx context.Context, req *Request, next Next) (Settlement, error)

// Answer calls f.
func (f AnswererFunc) Answer(ctx context.Context, req *Request, next Next) (Settlement, error) {
	return f(ctx, req, next)
}

// Chain composes answerers in order. The tail reports NO_PROVIDER.
func Chain(answerers ...Answerer) Answerer {
	return AnswererFunc(func(ctx context.Context, req *Request, next Next) (Settlement, error) {
		return run(ctx, req, answerers, next)
	})
}

func run(ctx context.Context, req *Request, rest []Answerer, tail Next) (Settlement, error) {
	if len(rest) == 0 {
		if tail != nil {
			return tail(ctx)
		}
		return Settlement{}, Errorf(CodeNoProvider, NoProviderMessage)
	}
	return rest[0].Answer(ctx, req, func(ctx context.Context) (Settlement, error) {
		return run(ctx, req, rest[1:], tail)
	})
}

// Scoped limits an answerer to one agent's requests; every other agent's
// requests go straight to next (the seed's agent-scoped listeners).
func Scoped(agentID string, a Answerer) Answerer {
	return AnswererFunc(func(ctx context.Context, req *Request, next Next) (Settlement, error) {
		if req.Agent.ID != agentID {
			return next(ctx)
		}
		return a.Answer(ctx, req, next)
	})
}
