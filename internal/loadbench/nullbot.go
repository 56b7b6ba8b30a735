package loadbench

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// NullBotOptions configure a null bot.
type NullBotOptions struct {
	SlackURL      string // Web API base URL, ending in /
	SigningSecret string
	Channel       string
}

// NullBot does the HTTP legs of one askslack ask with no logic: it accepts
// POST /v1/asks, posts one button with chat.postMessage, waits for the
// click on POST /slack/interactions (signature checked, ack at once),
// returns the answer, and replaces the message with chat.update. It keeps
// no state beyond the waiters in memory. It is the floor askslack's
// throughput is compared with.
type NullBot struct {
	opts   NullBotOptions
	client *http.Client

	mu      sync.Mutex
	waiters map[string]chan string // callId → the clicker's user id
}

// NewNullBot returns a null bot; serve it with Handler.
func NewNullBot(opts NullBotOptions) *NullBot {
	if !strings.HasSuffix(opts.SlackURL, "/") {
		opts.SlackURL += "/"
	}
	return &NullBot{opts: opts, client: &http.Client{Transport: Transport(1024), Timeout: 15 * time.Second},
		waiters: map[string]chan string{}}
}

// nullPrefix marks the null bot's action ids: "null:<callId>".
const nullPrefix = "null:"

// NullCallID is SlackOptions.CallID for the null bot's buttons.
func NullCallID(actionID, _, _ string) string {
	id, ok := strings.CutPrefix(actionID, nullPrefix)
	if !ok {
		return ""
	}
	return id
}

// Handler serves the null bot's routes.
func (n *NullBot) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/asks", n.ask)
	mux.HandleFunc("POST /slack/interactions", n.interaction)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

type nullAsk struct {
	CallID    string `json:"callId"`
	Questions []struct {
		ID       string `json:"id"`
		Question string `json:"question"`
		Options  []struct {
			Label string `json:"label"`
		} `json:"options"`
	} `json:"questions"`
}

func (n *NullBot) ask(w http.ResponseWriter, r *http.Request) {
	var a nullAsk
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&a); err != nil || a.CallID == "" ||
		len(a.Questions) == 0 || len(a.Questions[0].Options) == 0 {
		http.Error(w, `{"error":{"code":"BAD_REQUEST","message":"bad ask"}}`, http.StatusBadRequest)
		return
	}
	q := a.Questions[0]
	ch := make(chan string, 1)
	n.mu.Lock()
	n.waiters[a.CallID] = ch
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.waiters, a.CallID)
		n.mu.Unlock()
	}()
	text, _ := json.Marshal(q.Question)
	label, _ := json.Marshal(q.Options[0].Label)
	aid, _ := json.Marshal(nullPrefix + a.CallID)
	blocks := `[{"type":"section","text":{"type":"mrkdwn","text":` + string(text) + `}},` +
		`{"type":"actions","block_id":"a","elements":[{"type":"button","action_id":` + string(aid) +
		`,"value":"0","text":{"type":"plain_text","text":` + string(label) + `}}]}]`
	ts, err := n.slack(r.Context(), "chat.postMessage", url.Values{"channel": {n.opts.Channel}, "text": {q.Question}, "blocks": {blocks}})
	if err != nil {
		http.Error(w, `{"error":{"code":"NO_PROVIDER","message":"post failed"}}`, http.StatusServiceUnavailable)
		return
	}
	var user string
	select {
	case user = <-ch:
	case <-r.Context().Done():
		return
	}
	qid, _ := json.Marshal(q.ID)
	uid, _ := json.Marshal(user)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"answers":[{"id":`+string(qid)+`,"selected":[`+string(label)+`]}],"respondent":{"userId":`+string(uid)+`,"surface":"slack"}}`)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	// The read-only "answered" state, as askslack replaces the message.
	done := `[{"type":"section","text":{"type":"mrkdwn","text":` + string(text) + `}}]`
	_, _ = n.slack(context.WithoutCancel(r.Context()), "chat.update", url.Values{"channel": {n.opts.Channel}, "ts": {ts}, "blocks": {done}})
}

func (n *NullBot) slack(ctx context.Context, method string, form url.Values) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.opts.SlackURL+method, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer xoxb-null")
	resp, err := n.client.Do(req)
	if err != nil {
		return "", err
	}
	defer func() {
		io.Copy(io.Discard, resp.Body) // to EOF, so the connection is reused
		resp.Body.Close()
	}()
	var out struct {
		OK    bool   `json:"ok"`
		TS    string `json:"ts"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	if !out.OK {
		return "", fmt.Errorf("%s: %s", method, out.Error)
	}
	return out.TS, nil
}

func (n *NullBot) interaction(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	ts, _ := strconv.ParseInt(r.Header.Get("X-Slack-Request-Timestamp"), 10, 64)
	if d := time.Since(time.Unix(ts, 0)); d > 5*time.Minute || d < -5*time.Minute ||
		!hmac.Equal([]byte(Sign(n.opts.SigningSecret, ts, body)), []byte(r.Header.Get("X-Slack-Signature"))) {
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	var p struct {
		User    struct{ ID string } `json:"user"`
		Actions []struct {
			ActionID string `json:"action_id"`
		} `json:"actions"`
	}
	if err := json.Unmarshal([]byte(form.Get("payload")), &p); err != nil {
		http.Error(w, "bad payload", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK) // the ack
	for _, a := range p.Actions {
		n.mu.Lock()
		ch := n.waiters[NullCallID(a.ActionID, "", "")]
		n.mu.Unlock()
		if ch != nil {
			select {
			case ch <- p.User.ID:
			default: // already clicked
			}
		}
	}
}

// ServeNullBot runs a null bot on addr until ctx ends.
func ServeNullBot(ctx context.Context, addr string, opts NullBotOptions) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: NewNullBot(opts).Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
