package slackfake

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

const appToken = "xapp-1-A0FAKEAPP-test"

// nextEvent returns the next client event of type typ, skipping others
// (connecting, connected, hello).
func nextEvent(t *testing.T, ctx context.Context, c *socketmode.Client, typ socketmode.EventType) socketmode.Event {
	t.Helper()
	for {
		select {
		case evt := <-c.Events:
			if evt.Type == typ {
				return evt
			}
		case <-ctx.Done():
			t.Fatalf("no %s event: %v", typ, ctx.Err())
		}
	}
}

type result struct {
	resp Response
	err  error
}

// async runs a delivering call in the background; the test app answers it meanwhile.
func async(f func() (Response, error)) chan result {
	ch := make(chan result, 1)
	go func() {
		r, err := f()
		ch <- result{r, err}
	}()
	return ch
}

func TestSocketModeRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, Options{AppToken: appToken})
	ctx := testCtx(t)
	api := slack.New(botToken, slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken(appToken))
	client := socketmode.New(api)
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- client.RunContext(runCtx) }()
	t.Cleanup(func() { stop(); <-stopped })

	if err := s.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ts := post(t, api, "C0Q", question())

	// A click, acked with a payload.
	res := async(func() (Response, error) { return s.ClickButton(ctx, alice, "C0Q", ts, "Approach A", Delivery{}) })
	evt := nextEvent(t, ctx, client, socketmode.EventTypeInteractive)
	ic, ok := evt.Data.(slack.InteractionCallback)
	if !ok {
		t.Fatalf("event data %T", evt.Data)
	}
	if ic.Type != slack.InteractionTypeBlockActions || ic.User.ID != "U0ALICE" || ic.Container.MessageTs != ts ||
		len(ic.ActionCallback.BlockActions) != 1 || ic.ActionCallback.BlockActions[0].Value != "a" {
		t.Errorf("interaction %+v", ic)
	}
	if evt.Request.AcceptsResponsePayload {
		t.Error("block_actions envelope accepts a response payload")
	}
	if err := client.Ack(*evt.Request, map[string]string{"text": "thanks"}); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil || r.resp.Transport != TransportSocket || r.resp.Status != 200 || string(r.resp.Body) != `{"text":"thanks"}` {
		t.Fatalf("click result %+v %s %v", r.resp, r.resp.Body, r.err)
	}

	// The click's trigger opens a modal; its submission is acked with field errors.
	v, err := api.OpenViewContext(ctx, ic.TriggerID, modalRequest("Other answer"))
	if err != nil {
		t.Fatal(err)
	}
	res = async(func() (Response, error) {
		return s.SubmitView(ctx, alice, v.ID, map[string][]string{"answer": {"x"}}, Delivery{})
	})
	evt = nextEvent(t, ctx, client, socketmode.EventTypeInteractive)
	ic = evt.Data.(slack.InteractionCallback)
	if ic.Type != slack.InteractionTypeViewSubmission || ic.View.State.Values["answer"]["text"].Value != "x" || !evt.Request.AcceptsResponsePayload {
		t.Errorf("submission %+v (accepts payload %v)", ic.View.State, evt.Request.AcceptsResponsePayload)
	}
	if err := client.Ack(*evt.Request, slack.NewErrorsViewSubmissionResponse(map[string]string{"answer": "Too short"})); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil {
		t.Fatal(r.err)
	}
	if fv, _ := s.View(v.ID); fv.Closed || fv.Errors["answer"] != "Too short" {
		t.Errorf("view after errors ack: %+v", fv)
	}

	// Slack asks the client to reconnect; it does, and deliveries go on.
	s.Disconnect("refresh_requested")
	if _, err := s.WaitFor(ctx, "apps.connections.open", func(Call) bool { return len(s.Calls("apps.connections.open")) >= 2 }); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	res = async(func() (Response, error) { return s.ClickButton(ctx, bob, "C0Q", ts, "Approach B", Delivery{}) })
	evt = nextEvent(t, ctx, client, socketmode.EventTypeInteractive)
	if err := client.Ack(*evt.Request); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil || r.resp.Body != nil {
		t.Errorf("after reconnect: %+v %v", r.resp, r.err)
	}
}

// rawClient is a bare WebSocket client, to see the frames themselves.
type rawClient struct {
	ws     *websocket.Conn
	frames chan []byte
	pings  chan struct{}
}

func dialRaw(t *testing.T, s *Server) *rawClient {
	t.Helper()
	ctx := testCtx(t)
	_, u, err := slack.New("", slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken(appToken)).StartSocketModeContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := websocket.DefaultDialer.DialContext(ctx, u, nil); err == nil {
		t.Error("a connection URL worked twice")
	}
	c := &rawClient{ws: ws, frames: make(chan []byte, 16), pings: make(chan struct{}, 1)}
	ws.SetPingHandler(func(string) error {
		select {
		case c.pings <- struct{}{}:
		default:
		}
		return nil
	})
	go func() {
		defer close(c.frames)
		for {
			_, b, err := ws.ReadMessage()
			if err != nil {
				return
			}
			c.frames <- b
		}
	}()
	t.Cleanup(func() { _ = ws.Close() })
	return c
}

func (c *rawClient) next(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	select {
	case b, ok := <-c.frames:
		if !ok {
			t.Fatal("connection closed")
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no frame")
	}
	return nil
}

func frameKeys(m map[string]json.RawMessage) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sampleFrameKeys(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/socketmode_frames.json")
	if err != nil {
		t.Fatal(err)
	}
	var frames map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &frames); err != nil {
		t.Fatal(err)
	}
	return frameKeys(frames[name])
}

func TestSocketFrames(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, Options{AppToken: appToken, AckTimeout: 100 * time.Millisecond, PingInterval: 10 * time.Millisecond})
	ctx := testCtx(t)
	c := dialRaw(t, s)

	hello := c.next(t)
	if string(hello["type"]) != `"hello"` || string(hello["num_connections"]) != "1" || !slices.Equal(frameKeys(hello), sampleFrameKeys(t, "hello")) {
		t.Errorf("hello %v", hello)
	}
	select {
	case <-c.pings:
	case <-ctx.Done():
		t.Fatal("no ping")
	}
	if err := s.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}

	payload := map[string]any{"type": "block_actions", "user": map[string]any{"id": "U0ALICE"}}
	res := async(func() (Response, error) { return s.Deliver(ctx, payload, Delivery{}) })
	env := c.next(t)
	if !slices.Equal(frameKeys(env), sampleFrameKeys(t, "interactive_envelope_shortcut")) || string(env["type"]) != `"interactive"` {
		t.Errorf("envelope %v", env)
	}
	if r := <-res; !errors.Is(r.err, ErrAckTimeout) {
		t.Errorf("no ack: %v", r.err)
	}

	res = async(func() (Response, error) { return s.Deliver(ctx, payload, Delivery{RetryNum: 1}) })
	env = c.next(t)
	if string(env["retry_attempt"]) != "1" || string(env["retry_reason"]) != `"http_timeout"` {
		t.Errorf("retry envelope %v", env)
	}
	ack := `{"envelope_id":` + string(env["envelope_id"]) + `,"payload":{"response_action":"clear"}}`
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte(ack)); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil || string(r.resp.Body) != `{"response_action":"clear"}` {
		t.Errorf("ack %s %v", r.resp.Body, r.err)
	}

	s.Disconnect("warning")
	if d := c.next(t); string(d["type"]) != `"disconnect"` || string(d["reason"]) != `"warning"` {
		t.Errorf("disconnect frame %v", d)
	}
	if n := s.SocketClients(); n != 0 {
		t.Errorf("%d clients after disconnect", n)
	}
	if _, err := s.Deliver(ctx, payload, Delivery{Transport: TransportSocket}); !errors.Is(err, ErrNoTransport) {
		t.Errorf("deliver with no clients: %v", err)
	}
}

// With several connections, each payload goes to one of them.
func TestSocketOneOfSeveral(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, Options{AppToken: appToken})
	ctx := testCtx(t)
	// The handshake returns before the server registers the connection (it
	// registers and writes hello under one lock), so b dials only after a's
	// hello: otherwise b's hello may count one connection, not two.
	a := dialRaw(t, s)
	a.next(t)
	b := dialRaw(t, s)
	if h := b.next(t); string(h["num_connections"]) != "2" {
		t.Errorf("second hello %v", h)
	}
	if err := s.WaitConnected(ctx, 2); err != nil {
		t.Fatal(err)
	}
	payload := map[string]any{"type": "block_actions"}
	var got []*rawClient
	for range 2 {
		res := async(func() (Response, error) { return s.Deliver(ctx, payload, Delivery{}) })
		var env map[string]json.RawMessage
		var from *rawClient
		select {
		case f := <-a.frames:
			from = a
			_ = json.Unmarshal(f, &env)
		case f := <-b.frames:
			from = b
			_ = json.Unmarshal(f, &env)
		case <-ctx.Done():
			t.Fatal("no envelope")
		}
		if err := from.ws.WriteMessage(websocket.TextMessage, []byte(`{"envelope_id":`+string(env["envelope_id"])+`}`)); err != nil {
			t.Fatal(err)
		}
		if r := <-res; r.err != nil {
			t.Fatal(r.err)
		}
		got = append(got, from)
	}
	if got[0] == got[1] {
		t.Error("both payloads went to the same connection")
	}
	if len(a.frames)+len(b.frames) != 0 {
		t.Error("a payload went to more than one connection")
	}
}
