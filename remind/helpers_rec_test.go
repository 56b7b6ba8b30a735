package remind_test

import (
	"testing"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/waterfall"
)

// rec is the record of a stored ask, as the Host hands it to observers.
func rec(t testing.TB, a *asktype.Ask) *waterfall.Record {
	t.Helper()
	r, err := waterfall.Decode(a)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
