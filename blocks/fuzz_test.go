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
		req.Agent.SessionID = "s-" + string(id[:min(len(id), 100)]) // a timed ask needs a session
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
			if dup := s.bit(); seen[o.Label] || dup {
				l, _ := head(o.Label, waterfall.MaxLabelLen-4)
				o.Label = fmt.Sprintf("%s %d", l, oi)
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
	for _, s := range seeds {
		f.Add(s.sp.bytes(), s.text)
	}
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
	v := waterfall.View{CallID: req.CallID, Request: req, Phase: waterfall.PhaseOpen, Now: testNow}
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

// Size classes of grow, as the byte that selects them.
const (
	one  byte = 0   // the fragment once
	ten  byte = 100 // about 10 characters
	s76  byte = 150 // just over a label's 75
	s300 byte = 200
	s3k  byte = 240
	huge byte = 252 // the field's maximum
)

type qspec struct {
	q, header, detail    byte // size classes; header/detail 0 means absent
	multi, plan          bool
	opts                 int // 0-6, 7-53 or 100
	label, desc, preview byte
}

type spec struct {
	idLen                  int
	agent, principal, task byte
	timed                  bool
	qs                     []qspec
}

// bytes is the fuzz input that makes fuzzRequest build the request spec
// describes; it mirrors fuzzRequest's reads one for one.
func (sp spec) bytes() []byte {
	var b []byte
	opt := func(on bool, size byte) {
		if on {
			b = append(b, 1, size)
		} else {
			b = append(b, 0)
		}
	}
	if sp.idLen >= 128 {
		b = append(b, 0, 1)
		sp.idLen = 128
	} else {
		b = append(b, byte(sp.idLen-1), 0)
	}
	b = append(b, make([]byte, sp.idLen)...)
	b = append(b, sp.agent)
	opt(sp.principal > 0, sp.principal)
	opt(sp.task > 0, sp.task)
	if sp.timed {
		b = append(b, 1, 5, 5)
	} else {
		b = append(b, 0)
	}
	if n := len(sp.qs); n <= 4 {
		b = append(b, byte(n-1), 0)
	} else {
		b = append(b, 0, 231, byte(n-1))
	}
	for _, q := range sp.qs {
		b = append(b, q.q)
		opt(q.header > 0, q.header)
		opt(q.detail > 0, q.detail)
		if q.multi {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		switch {
		case q.opts <= 6:
			b = append(b, byte(q.opts), 0)
		case q.opts >= 100:
			b = append(b, 0, 201)
		default:
			b = append(b, 0, byte(202+q.opts))
		}
		for range min(q.opts, 100) {
			b = append(b, q.label, 0)
			opt(q.desc > 0, q.desc)
			if q.preview > 0 {
				b = append(b, 201, q.preview)
			} else {
				b = append(b, 0)
			}
		}
		if q.plan {
			b = append(b, 161)
			if q.detail == 0 {
				b = append(b, ten)
			}
			b = append(b, 0)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

// seeds are the shapes the fuzzer starts from besides the committed
// corpus: the largest and the most awkward requests waterfall accepts.
var seeds = []struct {
	sp   spec
	text string
}{
	{spec{idLen: 8, agent: one, qs: []qspec{{q: one, opts: 2, label: one}}}, "claude|Deploy now?|Yes|No"},
	{spec{idLen: 128, agent: s300, principal: s300, task: s300, timed: true, qs: []qspec{{q: s300, header: s76, detail: s300, opts: 5, label: ten, desc: s76, preview: s300}}},
		"Which *db*?|<!channel> ping|`code`|🎉|**bold** [x](https://e.com)"},
	{spec{idLen: 20, agent: ten, qs: []qspec{{q: ten, detail: huge, plan: true, opts: 3, label: ten}}},
		"Approve?|## Plan\n- **do** it\n```go\nx := a < b\n```\n|Approve|<&>"},
	{spec{idLen: 128, agent: ten, qs: repeatQ(20, qspec{q: s300, header: ten, detail: s3k, opts: 100, label: s300, desc: s300})},
		"<&>|lbl|*_~`"},
	{spec{idLen: 40, agent: ten, qs: repeatQ(6, qspec{q: ten, multi: true, opts: 100, label: s76, desc: s76, preview: s3k})},
		"🎉👍🏽|漢字|x"},
	{spec{idLen: 12, agent: ten, qs: []qspec{{q: huge, header: huge, detail: huge, opts: 100, label: huge, desc: huge, preview: huge}}},
		"<&>"},
	{spec{idLen: 12, agent: ten, timed: true, qs: []qspec{
		{q: ten, opts: 25, label: ten}, {q: ten, multi: true, opts: 11, label: s76}, {q: s300}, {q: ten, detail: s3k, plan: true, opts: 6, label: s76}}},
		"Question|opt|\u202e\x00ctl|\u2028line"},
}

func repeatQ(n int, q qspec) []qspec {
	out := make([]qspec, n)
	for i := range out {
		out[i] = q
		out[i].multi = q.multi || i%2 == 1
	}
	return out
}

// TestRenderFuzzSeeds checks that the seed specs build the requests they
// describe, so the fuzzer really starts from the extremes.
func TestRenderFuzzSeeds(t *testing.T) {
	for i, s := range seeds {
		req := fuzzRequest(s.sp.bytes(), s.text)
		if err := waterfall.Validate(req); err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		if i == 0 && (req.Questions[0].Question != "Deploy now?" || req.Questions[0].Options[1].Label != "No") {
			t.Fatalf("seed 0: %+v", req.Questions[0])
		}
		if len(req.Questions) != len(s.sp.qs) || len(req.CallID) != min(s.sp.idLen, 128) {
			t.Fatalf("seed %d: %d questions, call id %d; want %d, %d", i, len(req.Questions), len(req.CallID), len(s.sp.qs), s.sp.idLen)
		}
		for qi, q := range s.sp.qs {
			got := req.Questions[qi]
			if len(got.Options) != q.opts || got.PlanReview() != q.plan || (got.Detail != "") != (q.detail > 0 || q.plan) {
				t.Fatalf("seed %d question %d: %d options, plan %v; want %d, %v", i, qi, len(got.Options), got.PlanReview(), q.opts, q.plan)
			}
		}
	}
}
