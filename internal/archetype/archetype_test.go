package archetype

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/clock"
)

func TestOfFillsWhatIsMissingAndKeepsWhatIsGiven(t *testing.T) {
	a := Of(nil, nil)
	if a.Logger != slog.Default() || a.Clock == nil {
		t.Fatalf("defaults = %+v; want slog.Default() and real time", a)
	}
	var b strings.Builder
	l := slog.New(slog.NewTextHandler(&b, nil))
	c := clock.NewFake(time.Unix(1e9, 0))
	if got := Of(l, c); got.Logger != l || got.Clock != clock.Clock(c) {
		t.Fatalf("given = %+v; want them kept", got)
	}
}
