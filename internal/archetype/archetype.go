// Package archetype is what every long-running service takes from the app
// that builds it — where it logs and what time it is — with the defaults
// set here, once, rather than in each constructor (river's
// baseservice.Archetype): a service embeds an Archetype made by Of.
package archetype

import (
	"log/slog"

	"github.com/askslack/askslack/internal/clock"
)

// Archetype is a service's logger and clock.
type Archetype struct {
	Logger *slog.Logger
	Clock  clock.Clock
}

// Of is the archetype of a service whose options carry logger and c: nil
// is the process's default logger, and real time.
func Of(logger *slog.Logger, c clock.Clock) Archetype {
	if logger == nil {
		logger = slog.Default()
	}
	return Archetype{Logger: logger, Clock: clock.OrReal(c)}
}
