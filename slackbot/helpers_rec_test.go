package slackbot

import (
	"testing"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/waterfall"
)

// rec is the record of a stored ask, as the mirror hands it to the surface.
func rec(t testing.TB, a *asktype.Ask) *waterfall.Record {
	t.Helper()
	r, err := waterfall.Decode(a)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
