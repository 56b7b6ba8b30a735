package blocks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// shape reads layout decisions from fuzz bytes; past the end it reads 0.
type shape struct {
	b []byte
	i int
}

func (s *shape) next() int {
	if s.i >= len(s.b) {
		return 0
	}
	s.i++
	return int(s.b[s.i-1])
}

func (s *shape) bit() bool { return s.next()&1 == 1 }

// fragments cycles through the pieces of the fuzzed text.
type fragments struct {
	parts []string
	i     int
}

func (f *fragments) next() string {
	p := f.parts[f.i%len(f.parts)]
	f.i++
	return p
}

// grow repeats a fragment to a length chosen by the shape: mostly short,
// sometimes far beyond every Slack cap (up to the request's 100,000).
func grow(s *shape, f *fragments, limit int) string {
	p := f.next()
	if p == "" {
		p = "x"
	}
	n := 1
	switch b := s.next(); {
	case b >= 252:
		n = limit
	case b >= 240:
		n = 3000
	case b >= 200:
		n = 300
	case b >= 150:
		n = 76
	case b >= 100:
		n = 10
	}
	out := strings.Repeat(p, max(1, n/len([]rune(p))))
	if r := []rune(out); len(r) > limit {
		out = string(r[:limit])
	}
	return out
}

const idChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:@+="

// fuzzRequest builds a request from fuzz input. It need not be valid: the
// caller skips what waterfall.Validate rejects.
func fuzzRequest(b []byte, text string) *waterfall.Request {
	s := &shape{b: b}
	f := &fragments{parts: strings.Split(text, "|")}
	n := 1 + s.next()%128
	if s.bit() {
		n = 128
	}
	id := make([]byte, n)
	for i := range id {
		id[i] = idChars[s.next()%len(idChars)]
	}
	req := &waterfall.Request{CallID: string(id), Agent: waterfall.Agent{ID: grow(s, f, 1000)}}
	if s.bit() {
		req.Agent.Principal = grow(s, f, 1000)
	}
	if s.bit() {
		req.Agent.SourceTaskID = grow(s, f, 1000)
	}
	if s.bit() {
		ms := float64(1000 * (1 + s.next()*s.next()))
		req.TimeoutMs = &ms
	}
	nq := 1 + s.next()%4
	if s.next() > 230 {
		nq = 1 + s.next()%waterfall.MaxQuestions
	}
	for qi := range nq {
		q := waterfall.Question{ID: fmt.Sprintf("q%d", qi), Question: grow(s, f, waterfall.MaxTextLen)}
		if s.bit() {
			q.Header = grow(s, f, 1000)
		}
		if s.bit() {
			q.Detail = grow(s, f, waterfall.MaxTextLen)
		}
		q.MultiSelect = s.bit()
		no := s.next() % 7
		if b := s.next(); b > 200 {
			no = b % (waterfall.MaxOptions + 1)
		}
		seen := map[string]bool{}
		for oi := range no {
			o := waterfall.Option{Label: grow(s, f, waterfall.MaxLabelLen)}
			if seen[o.Label] || s.bit() {
				o.Label = fmt.Sprintf("%s %d", o.Label, oi)
			}
			seen[o.Label] = true
			if s.bit() {
				o.Description = grow(s, f, waterfall.MaxTextLen)
			}
			if s.next() > 200 {
				o.Preview = grow(s, f, waterfall.MaxTextLen)
			}
			q.Options = append(q.Options, o)
		}
		switch b := s.next(); {
		case b > 160 && len(q.Options) > 0:
			q.MultiSelect = false
			if strings.TrimSpace(q.Detail) == "" {
				q.Detail = grow(s, f, waterfall.MaxTextLen) + " plan"
			}
			q.Intent = &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: q.Options[s.next()%len(q.Options)].Label}
		case b > 150:
			q.Intent = &waterfall.Intent{Kind: "poll"} // unknown: the generic flow
		}
		req.Questions = append(req.Questions, q)
	}
	return req
}

// FuzzRender: any request that passes waterfall.Validate renders, in every
// phase and every modal its messages open, within Slack's limits (checked
// by internal/blockcheck), and every action id, block id and option value
// in the output decodes to the right ask, question and option.
func FuzzRender(f *testing.F) {
	f.Add([]byte{}, "Deploy now?|Yes|No")
	f.Add([]byte{3, 0, 0, 0, 0, 0, 2, 0, 1, 1, 5, 0, 1, 1, 1}, "Which *db*?|Postgres|<!channel> ping|`code`|🎉")
	f.Add([]byte{200, 1, 255, 1, 255, 1, 255, 1, 4, 8, 1, 0, 255, 255, 1, 1, 254, 0, 250, 1, 255, 0, 170, 3}, "Plan: **do it**\n```go\nx := 1\n```|Approve|Decline|<&>")
	f.Add([]byte{10, 0, 0, 0, 0, 0, 240, 19, 255, 1, 255, 1, 1, 210, 100, 255, 1, 255}, "Q|opt with a rather long label that goes on and on and on|d")
	f.Add([]byte{127, 1, 1, 240, 1, 240, 1, 9, 9, 0, 3, 240, 1, 252, 0, 1, 6, 201, 100}, "ÿ\u202e\x00\x01|\u2028|&&&&|<<<<|ab*c_d~e`f")
	f.Fuzz(func(t *testing.T, b []byte, text string) {
		req := fuzzRequest(b, text)
		if err := waterfall.Validate(req); err != nil {
			t.Skip()
		}
		checkAll(t, req)
		checkState(t, req)
	})
}

// checkState ticks every choice of every stateful control the open message
// and the batch modal hold and reads the ticks back with FromState: each
// option value must come back as the offered label, untruncated.
func checkState(t *testing.T, req *waterfall.Request) {
	t.Helper()
	v := View{CallID: req.CallID, Request: req, Phase: PhaseOpen, Now: testNow}
	m := Render(v)
	sources := [][]slack.Block{m.Blocks, OtherModal(v, 0, testMeta).Blocks.BlockSet}
	for _, bs := range sources {
		values := map[string]map[string]slack.BlockAction{}
		want := make([][]string, len(req.Questions))
		for _, e := range Elements(bs) {
			if e.ActionID != actionID(KindCheck, -1) && e.ActionID != actionID(KindSelect, -1) && e.ActionID != InputChoices {
				continue
			}
			qi := questionOf(e.BlockID)
			if qi < 0 || len(e.Values) == 0 {
				t.Fatalf("stateful element %s/%s without question or options", e.BlockID, e.ActionID)
			}
			act := slack.BlockAction{ActionID: e.ActionID, BlockID: e.BlockID}
			q := &req.Questions[qi]
			if e.Type == slack.METCheckboxGroups || e.Type == slack.MessageElementType(slack.MultiOptTypeStatic) {
				for _, val := range e.Values {
					act.SelectedOptions = append(act.SelectedOptions, slack.OptionBlockObject{Value: val})
					oi, _ := ParseOptionValue(val)
					want[qi] = append(want[qi], q.Options[oi].Label)
				}
			} else {
				val := e.Values[len(e.Values)-1]
				act.SelectedOption = slack.OptionBlockObject{Value: val}
				oi, _ := ParseOptionValue(val)
				want[qi] = []string{q.Options[oi].Label}
			}
			if values[e.BlockID] == nil {
				values[e.BlockID] = map[string]slack.BlockAction{}
			}
			values[e.BlockID][e.ActionID] = act
		}
		picked, err := FromState(req.CallID, req, values)
		if err != nil {
			t.Fatalf("FromState: %v", err)
		}
		for qi := range req.Questions {
			if fmt.Sprint(picked[qi].Selected) != fmt.Sprint(want[qi]) && !(len(want[qi]) == 0 && len(picked[qi].Selected) == 0) {
				t.Fatalf("question %d: FromState read %q, ticked %q", qi, picked[qi].Selected, want[qi])
			}
		}
	}
}
