// Package playground is the web page of `askslack try`: it shows what the
// project's fake Slack (internal/slackfake) holds — the questions channel,
// threads, ephemerals, modals, the App Home tab and the DM copies — the way
// a Slack client would, rendered from exactly the Block Kit JSON the fake
// received, and turns a person's clicks on the page into the fake's signed
// interaction deliveries to the bot. It owns nothing of the bot and talks
// to it only through the fake, as Slack would.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary
// (static/); it updates live through server-sent events.
package playground

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askslack/askslack/internal/slackfake"
)

//go:embed static
var static embed.FS

// Person is someone the page can act as: a workspace member of the fake,
// and whether the bot's allowlist lets them answer (shown next to them).
type Person struct {
	User    slackfake.User
	Allowed bool
}

// Options configure a Server.
type Options struct {
	Fake        *slackfake.Server
	Channel     string // the questions channel id
	ChannelName string // shown as #name; default "agent-questions"
	People      []Person
	// Info lines shown on the page (how to ask from a terminal), in order.
	Info   []string
	Logger *slog.Logger
}

// Server is the playground's HTTP side. Start it to follow the fake.
type Server struct {
	opts  Options
	log   *slog.Logger
	names Names
	mux   *http.ServeMux

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when the fake changes

	done      chan struct{} // closed by Close: event streams end
	closeOnce sync.Once
}

// New builds the page server; call Run to follow the fake's changes.
func New(opts Options) *Server {
	if opts.ChannelName == "" {
		opts.ChannelName = "agent-questions"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: opts.Logger, changed: make(chan struct{}), done: make(chan struct{})}
	s.names = Names{Users: map[string]string{}, Channels: map[string]string{opts.Channel: opts.ChannelName}}
	fo := opts.Fake.Options()
	s.names.Users[fo.BotUserID] = "askslack"
	for _, p := range opts.People {
		s.names.Users[p.User.ID] = p.User.Name
	}
	sub, _ := fs.Sub(static, "static")
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /{$}", s.index)
	s.mux.Handle("GET /playground/static/", http.StripPrefix("/playground/static/", http.FileServerFS(sub)))
	s.mux.HandleFunc("GET /playground/events", s.events)
	s.mux.HandleFunc("GET /playground/state", s.state)
	s.mux.HandleFunc("POST /playground/act", s.act)
	return s
}

// ServeHTTP serves the page, its assets, the event stream and actions.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Run follows the fake until ctx ends: every change of its state wakes the
// event streams, which render again and send what differs.
func (s *Server) Run(ctx context.Context) {
	// WaitUntil takes the fake's change signal before it calls the
	// condition, so no change between two wake-ups is missed.
	_ = s.opts.Fake.WaitUntil(ctx, func() bool {
		s.mu.Lock()
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
		return false
	})
}

// Close ends the event streams, so an HTTP server shutting down is not
// held up by open pages (they reconnect to whatever serves next). Safe
// twice.
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.done) }) }

func (s *Server) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	b, err := static.ReadFile("static/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// person returns the Person a request acts as (?person= or the JSON
// field); the first one when none is named.
func (s *Server) person(id string) (Person, bool) {
	for _, p := range s.opts.People {
		if p.User.ID == id || p.User.Name == id {
			return p, true
		}
	}
	if id == "" && len(s.opts.People) > 0 {
		return s.opts.People[0], true
	}
	return Person{}, false
}

// item is one keyed piece of a pane: the page replaces it only when its
// HTML changed, so what a person is typing or has open stays put.
type item struct {
	Key  string `json:"k"`
	HTML string `json:"h"`
}

// snapshot is everything the page shows to one person.
type snapshot struct {
	Person  string            `json:"person"`
	People  []personJSON      `json:"people"`
	Channel string            `json:"channel"`
	Info    []string          `json:"info"`
	Panes   map[string][]item `json:"panes"`
	Counts  map[string]int    `json:"counts"`
}

type personJSON struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Allowed bool   `json:"allowed"`
}

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	p, ok := s.person(r.URL.Query().Get("person"))
	if !ok {
		http.Error(w, "unknown person", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(s.snapshot(p))
}

// events streams snapshots for one person as server-sent events: one at
// once, then one after every change of the fake that changes what they see.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	p, ok := s.person(r.URL.Query().Get("person"))
	if !ok {
		http.Error(w, "unknown person", http.StatusNotFound)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // the stream lives as long as the page
	_ = rc.SetReadDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	var last []byte
	keepalive := time.NewTicker(25 * time.Second)
	defer keepalive.Stop()
	for {
		ch := s.wait()
		b, err := json.Marshal(s.snapshot(p))
		if err != nil {
			return
		}
		if string(b) != string(last) {
			if _, err := fmt.Fprintf(w, "event: state\ndata: %s\n\n", b); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			last = b
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-ch:
		case <-keepalive.C:
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil {
				return
			}
			_ = rc.Flush()
		}
	}
}

// snapshot renders what p sees now.
func (s *Server) snapshot(p Person) snapshot {
	f := s.opts.Fake
	snap := snapshot{Person: p.User.ID, Channel: s.opts.ChannelName, Info: s.opts.Info, Panes: map[string][]item{}, Counts: map[string]int{}}
	for _, q := range s.opts.People {
		snap.People = append(snap.People, personJSON{ID: q.User.ID, Name: q.User.Name, Allowed: q.Allowed})
	}
	msgs := f.Messages()
	ephemerals := f.Ephemerals()
	refused := s.refusals()
	snap.Panes["channel"] = s.conversation(p, s.opts.Channel, msgs, ephemerals, refused)
	if dm, open := f.DM(p.User.ID); open {
		snap.Panes["dm"] = s.conversation(p, dm, msgs, ephemerals, refused)
	}
	snap.Panes["home"] = s.home(p, refused)
	snap.Panes["modal"] = s.modal(p)
	for k, v := range snap.Panes {
		snap.Counts[k] = len(v)
	}
	return snap
}

// refusal is a Web API call Slack refused for its content.
type refusal struct {
	call    slackfake.Call
	channel string // where it was meant to appear ("" for views)
	user    string // views.publish: whose Home tab
	at      time.Time
}

// contentErrors are the answers Slack gives to blocks or views it refuses.
var contentErrors = map[string]bool{"invalid_blocks": true, "invalid_arguments": true, "no_text": true,
	"msg_too_long": true, "invalid_blocks_format": true, "too_many_attachments": true}

func (s *Server) refusals() []refusal {
	var out []refusal
	for _, c := range s.opts.Fake.Calls("") {
		if c.OK() || !contentErrors[c.Error()] {
			continue
		}
		out = append(out, refusal{call: c, channel: c.Params["channel"], user: c.Params["user_id"], at: c.At})
	}
	return out
}

func refusedHTML(c slackfake.Call) string {
	var r struct {
		Errors []string `json:"errors"`
	}
	_ = json.Unmarshal(c.Response, &r)
	return Refused(c.Method, c.Error(), r.Errors)
}

// entry is one thing in a conversation, in time order.
type entry struct {
	ts   float64
	item item
}

func tsFloat(ts string) float64 {
	f, _ := strconv.ParseFloat(ts, 64)
	return f
}

// conversation renders a channel or DM as p sees it: its top-level
// messages (and thread replies also sent to the channel), each with its
// thread, the ephemerals only p sees, and what Slack refused to post there.
func (s *Server) conversation(p Person, channel string, msgs []slackfake.Message, ephemerals []slackfake.Ephemeral, refused []refusal) []item {
	f := s.opts.Fake
	replies := map[string][]slackfake.Message{}
	for _, m := range msgs {
		if m.Channel == channel && m.ThreadTS != "" {
			replies[m.ThreadTS] = append(replies[m.ThreadTS], m)
		}
	}
	var es []entry
	for _, m := range msgs {
		if m.Channel != channel || (m.ThreadTS != "" && !m.Broadcast) {
			continue
		}
		var b strings.Builder
		b.WriteString(s.messageHTML(p, m, ""))
		if m.Broadcast {
			if parent, ok := f.Message(channel, m.ThreadTS); ok {
				b.Reset()
				b.WriteString(s.messageHTML(p, m, `<div class="broadcast-note">replied to a thread: `+excerpt(parent)+`</div>`))
			}
		}
		if rs := replies[m.TS]; len(rs) > 0 && m.ThreadTS == "" {
			sort.Slice(rs, func(i, j int) bool { return tsFloat(rs[i].TS) < tsFloat(rs[j].TS) })
			fmt.Fprintf(&b, `<details class="thread" open><summary>%d %s</summary>`, len(rs), plural(len(rs), "reply", "replies"))
			for _, r := range rs {
				note := ""
				if r.Broadcast {
					note = `<div class="broadcast-note">Also sent to the channel</div>`
				}
				b.WriteString(s.messageHTML(p, r, note))
			}
			b.WriteString(`</details>`)
		}
		es = append(es, entry{tsFloat(m.TS), item{Key: "m:" + m.Channel + ":" + m.TS, HTML: b.String()}})
	}
	for i, e := range ephemerals {
		if e.Channel != channel || e.User != p.User.ID {
			continue
		}
		html := `<div class="msg ephemeral" data-ts="` + e.TS + `">` + s.header(f.Options().BotUserID, e.TS) +
			`<div class="msg-body">` + Message(e.Text, e.Blocks, Surface{Names: s.names, Disabled: true}) + `</div>` +
			`<div class="ephemeral-note">👁 Only visible to you</div></div>`
		es = append(es, entry{tsFloat(e.TS), item{Key: "e:" + strconv.Itoa(i), HTML: html}})
	}
	for i, r := range refused {
		target := r.channel
		if strings.HasPrefix(target, "U") || strings.HasPrefix(target, "W") {
			if dm, ok := f.DM(target); ok {
				target = dm
			}
		}
		home := r.call.Method == "views.publish"
		view := strings.HasPrefix(r.call.Method, "views.")
		if home || (view && channel != s.opts.Channel) || (!view && target != channel) {
			continue
		}
		html := `<div class="msg refused-msg">` + s.header(f.Options().BotUserID, "") + refusedHTML(r.call) + `</div>`
		es = append(es, entry{float64(r.at.UnixMicro()) / 1e6, item{Key: "r:" + strconv.Itoa(i) + ":" + r.call.Method, HTML: html}})
	}
	sort.SliceStable(es, func(i, j int) bool { return es[i].ts < es[j].ts })
	out := make([]item, len(es))
	for i, e := range es {
		out[i] = e.item
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// excerpt is a short plain quote of a message (its notification text).
func excerpt(m slackfake.Message) string {
	t := m.Text
	if r := []rune(t); len(r) > 80 {
		t = string(r[:80]) + "…"
	}
	return escapeText(t)
}

// header is a message's sender line: name, APP badge for the bot, time.
func (s *Server) header(user, ts string) string {
	bot := user == s.opts.Fake.Options().BotUserID
	name := s.names.User(user)
	initial := "?"
	if r := []rune(name); len(r) > 0 {
		initial = strings.ToUpper(string(r[0]))
	}
	var b strings.Builder
	b.WriteString(`<div class="msg-head"><span class="avatar` + map[bool]string{true: " bot"}[bot] + `">` + escapeText(initial) + `</span>`)
	b.WriteString(`<span class="msg-name">` + escapeText(name) + `</span>`)
	if bot {
		b.WriteString(`<span class="app-badge">APP</span>`)
	}
	if ts != "" {
		b.WriteString(`<time class="msg-time" data-ts="` + ts + `"></time>`)
	}
	b.WriteString(`</div>`)
	return b.String()
}

// messageHTML renders one stored message with p's ticks in its controls.
func (s *Server) messageHTML(p Person, m slackfake.Message, note string) string {
	st := s.opts.Fake.MessageState(m.Channel, m.TS, p.User.ID)
	body := Message(m.Text, m.Blocks, Surface{Names: s.names, State: st})
	edited := ""
	if m.Updated > 0 {
		edited = `<span class="edited">(edited)</span>`
	}
	return fmt.Sprintf(`<div class="msg" data-surface="message" data-channel="%s" data-ts="%s">%s%s<div class="msg-body">%s</div>%s</div>`,
		m.Channel, m.TS, s.header(m.User, m.TS), note, body, edited)
}

// home renders p's App Home tab, as last published for them.
func (s *Server) home(p Person, refused []refusal) []item {
	var out []item
	for i, r := range refused {
		if r.call.Method == "views.publish" && r.user == p.User.ID {
			out = append(out, item{Key: "r:" + strconv.Itoa(i), HTML: refusedHTML(r.call)})
		}
	}
	v, ok := s.opts.Fake.Home(p.User.ID)
	if !ok {
		return out
	}
	html := `<div class="home" data-surface="home">` + Home(v.JSON, Surface{Names: s.names, State: s.opts.Fake.HomeState(p.User.ID)}) + `</div>`
	return append(out, item{Key: "home:" + v.ID + ":" + v.Hash, HTML: html})
}

// modal renders the top of p's open modal stack.
func (s *Server) modal(p Person) []item {
	open := s.opts.Fake.OpenViews(p.User.ID)
	if len(open) == 0 {
		return nil
	}
	v := open[len(open)-1]
	html := Modal(v.JSON, Surface{Names: s.names, Errors: v.Errors})
	return []item{{Key: "view:" + v.ID + ":" + v.Hash + ":" + hash(v.Errors), HTML: html}}
}

func hash(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// action is what the page sends when a person uses a control.
type action struct {
	Person   string              `json:"person"`
	Act      string              `json:"act"`     // button, checkboxes, radio_buttons, static_select, multi_static_select, overflow, submit, close, home-open, command, mention
	Surface  string              `json:"surface"` // message, home, modal
	Channel  string              `json:"channel"`
	TS       string              `json:"ts"`
	ViewID   string              `json:"viewId"`
	BlockID  string              `json:"blockId"`
	ActionID string              `json:"actionId"`
	Values   []string            `json:"values"` // option values chosen (the whole selection)
	Inputs   map[string][]string `json:"inputs"` // modal submit: input block_id → text, or option values
	Text     string              `json:"text"`   // command or mention text
}

// act delivers what a person did on the page through the fake, as Slack
// would deliver it: signed, to the bot's interaction, event or command URL.
// It answers once the bot acknowledged; what the bot does then arrives
// through the event stream.
func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	var a action
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&a); err != nil {
		http.Error(w, "bad action: "+err.Error(), http.StatusBadRequest)
		return
	}
	p, ok := s.person(a.Person)
	if !ok {
		http.Error(w, "unknown person", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	res, err := s.deliver(ctx, p.User, a)
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		s.log.Info("playground action not delivered", "act", a.Act, "person", p.User.Name, "err", err)
		w.WriteHeader(http.StatusUnprocessableEntity)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": err.Error()})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"status": res.Status})
}

var errUnknownAct = errors.New("unknown action")

func (s *Server) deliver(ctx context.Context, u slackfake.User, a action) (slackfake.Response, error) {
	f := s.opts.Fake
	d := slackfake.Delivery{}
	switch {
	case a.Act == "home-open":
		rec, err := f.SendEvent(ctx, f.HomeOpened(u), "", d)
		return rec.Response, err
	case a.Act == "command":
		return f.SendCommand(ctx, slackfake.Command{User: u, Channel: s.opts.Channel, Command: "/askslack", Text: a.Text}, d)
	case a.Act == "mention":
		_, ev := f.Mention(u, a.Channel, a.TS, a.Text)
		rec, err := f.SendEvent(ctx, ev, "", d)
		return rec.Response, err
	case a.Act == "close":
		return f.CloseView(ctx, u, a.ViewID, d)
	case a.Act == "submit":
		inputs, err := s.inputTexts(u, a)
		if err != nil {
			return slackfake.Response{}, err
		}
		return f.SubmitView(ctx, u, a.ViewID, inputs, d)
	case a.Act == "button" && a.Surface == "message":
		return f.ClickBlockButton(ctx, u, a.Channel, a.TS, a.BlockID, a.ActionID, d)
	case a.Act == "button" && a.Surface == "home":
		text, err := s.homeButtonText(u, a)
		if err != nil {
			return slackfake.Response{}, err
		}
		return f.ClickHome(ctx, u, a.BlockID, text, d)
	case a.Act == "button" && a.Surface == "modal":
		return f.ClickViewButton(ctx, u, a.ViewID, a.BlockID, a.ActionID, d)
	case selectable[a.Act] && a.Surface == "message":
		m, ok := f.Message(a.Channel, a.TS)
		if !ok {
			return slackfake.Response{}, fmt.Errorf("no message %s in %s", a.TS, a.Channel)
		}
		picks, err := optionTexts(m.Blocks, a.BlockID, a.ActionID, a.Values)
		if err != nil {
			return slackfake.Response{}, err
		}
		return f.Select(ctx, u, a.Channel, a.TS, a.BlockID, picks, d)
	case selectable[a.Act] && a.Surface == "home":
		v, ok := f.Home(u.ID)
		if !ok {
			return slackfake.Response{}, errors.New("no Home tab published")
		}
		picks, err := optionTexts(viewBlocks(v.JSON), a.BlockID, a.ActionID, a.Values)
		if err != nil {
			return slackfake.Response{}, err
		}
		return f.SelectHome(ctx, u, a.BlockID, picks, d)
	}
	return slackfake.Response{}, fmt.Errorf("%w %q on %q", errUnknownAct, a.Act, a.Surface)
}

var selectable = map[string]bool{"checkboxes": true, "radio_buttons": true, "static_select": true, "multi_static_select": true, "overflow": true}

func viewBlocks(view json.RawMessage) json.RawMessage {
	var v struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	_ = json.Unmarshal(view, &v)
	return v.Blocks
}

// findElement finds the element with actionID in block blockID.
func findElement(blocks json.RawMessage, blockID, actionID string) (element, bool) {
	list, _ := decodeList(blocks)
	for _, raw := range list {
		var bl block
		if json.Unmarshal(raw, &bl) != nil || bl.BlockID != blockID {
			continue
		}
		els := append([]json.RawMessage{}, bl.Elements...)
		if len(bl.Accessory) > 0 {
			els = append(els, bl.Accessory)
		}
		if len(bl.Element) > 0 {
			els = append(els, bl.Element)
		}
		for _, e := range els {
			var el element
			if json.Unmarshal(e, &el) == nil && el.ActionID == actionID {
				return el, true
			}
		}
	}
	return element{}, false
}

// optionTexts maps the option values the page sends to the option texts
// the fake picks by (it finds an option by text first, then by value). A
// text two options share cannot name one of them: that is refused rather
// than picking the wrong one.
func optionTexts(blocks json.RawMessage, blockID, actionID string, values []string) ([]string, error) {
	el, ok := findElement(blocks, blockID, actionID)
	if !ok {
		return nil, fmt.Errorf("no element %q in block %q", actionID, blockID)
	}
	opts := el.allOptions()
	count := map[string]int{}
	for _, o := range opts {
		count[o.Text.Text]++
	}
	picks := []string{}
	for _, v := range values {
		i := slices.IndexFunc(opts, func(o option) bool { return o.Value == v })
		if i < 0 {
			return nil, fmt.Errorf("no option with value %q in %q", v, actionID)
		}
		if count[opts[i].Text.Text] > 1 {
			return nil, fmt.Errorf("options of %q share the text %q: the fake cannot tell them apart", actionID, opts[i].Text.Text)
		}
		picks = append(picks, opts[i].Text.Text)
	}
	return picks, nil
}

// inputTexts maps a modal's inputs to what SubmitView takes: typed text
// as is, option values as option texts.
func (s *Server) inputTexts(u slackfake.User, a action) (map[string][]string, error) {
	v, ok := s.opts.Fake.View(a.ViewID)
	if !ok {
		return nil, fmt.Errorf("no view %s", a.ViewID)
	}
	blocks := viewBlocks(v.JSON)
	out := map[string][]string{}
	for blockID, vals := range a.Inputs {
		list, _ := decodeList(blocks)
		var el element
		for _, raw := range list {
			var bl block
			if json.Unmarshal(raw, &bl) == nil && bl.BlockID == blockID && bl.Type == "input" {
				_ = json.Unmarshal(bl.Element, &el)
			}
		}
		if el.Type == "" {
			return nil, fmt.Errorf("no input block %q in view %s", blockID, a.ViewID)
		}
		if el.Type == "plain_text_input" {
			out[blockID] = vals
			continue
		}
		picks, err := optionTexts(blocks, blockID, el.ActionID, vals)
		if err != nil {
			return nil, err
		}
		out[blockID] = picks
	}
	return out, nil
}

// homeButtonText is the text of the button the page clicked in p's Home
// tab (the fake's ClickHome finds a button by block and text).
func (s *Server) homeButtonText(u slackfake.User, a action) (string, error) {
	v, ok := s.opts.Fake.Home(u.ID)
	if !ok {
		return "", errors.New("no Home tab published")
	}
	el, ok := findElement(viewBlocks(v.JSON), a.BlockID, a.ActionID)
	if !ok || el.Type != "button" || el.Text == nil {
		return "", fmt.Errorf("no button %q in block %q of the Home tab", a.ActionID, a.BlockID)
	}
	return el.Text.Text, nil
}
