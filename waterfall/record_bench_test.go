package waterfall_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/waterfall"
)

// BenchmarkDecodeSettled measures the decoding a settled ask costs its
// readers: the waiter that returns the answer and the mirror that renders
// the message each decode the stored ask (two reads per ask, and more for
// the Home tab and the host API).
func BenchmarkDecodeSettled(b *testing.B) {
	req := `{"callId":"c1","agent":{"id":"a"},"questions":[{"id":"q","question":"` + strings.Repeat("x", 400) + `?","options":[{"label":"A"},{"label":"B"}]}]}`
	a := &asktype.Ask{CallID: "c1", State: asktype.Settled, Request: json.RawMessage(req), Created: time.Now(),
		Settlement: json.RawMessage(`{"answers":[{"id":"q","selected":["A"],"custom":"` + strings.Repeat("y", 200) + `"}],"respondent":{"userId":"U1","userName":"alice","surface":"slack","channel":"C1","messageTs":"1.1"}}`)}
	b.ReportAllocs()
	for b.Loop() {
		for range 2 { // the waiter, then the mirror
			r, err := waterfall.Decode(a)
			if err != nil || r.Settlement == nil {
				b.Fatal(err)
			}
		}
	}
}
