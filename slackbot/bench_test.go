package slackbot_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/slackbot"
	"github.com/askslack/askslack/waterfall"
)

// clickPayloads are block_actions payloads: Slack's sample
// (reference/payloads/block_actions_button.json) and the same shape
// carrying an askslack question message, as a click on it arrives.
func clickPayloads(b *testing.B) map[string][]byte {
	b.Helper()
	ref, err := os.ReadFile("../internal/slackfake/testdata/block_actions_button.json")
	if err != nil {
		b.Fatal(err)
	}
	req := &waterfall.Request{CallID: "call-1", Agent: waterfall.Agent{ID: "agent"}, Questions: []waterfall.Question{
		{ID: "q1", Header: "Deploy", Question: "Deploy build 1234 to production now?", Options: []waterfall.Option{
			{Label: "Yes", Description: "ship it"}, {Label: "No", Description: "hold"}}},
	}}
	msg := blocks.Render(waterfall.View{CallID: req.CallID, Request: req, Phase: waterfall.PhaseOpen})
	bs, err := json.Marshal(msg.Blocks)
	if err != nil {
		b.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(ref, &p); err != nil {
		b.Fatal(err)
	}
	p["message"].(map[string]any)["blocks"] = json.RawMessage(bs)
	// The first button of the message, as the click.
	var button map[string]any
	var blockID string
	var parsed []map[string]any
	_ = json.Unmarshal(bs, &parsed)
	for _, bl := range parsed {
		els, _ := bl["elements"].([]any)
		for _, e := range els {
			if m := e.(map[string]any); m["type"] == "button" && button == nil {
				button, blockID = m, bl["block_id"].(string)
			}
		}
	}
	if button == nil {
		b.Fatal("no button in the rendered question")
	}
	p["actions"] = []any{map[string]any{"action_id": button["action_id"], "block_id": blockID, "text": button["text"],
		"value": button["value"], "type": "button", "action_ts": "1600857126.868122"}}
	ask, err := json.Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	return map[string][]byte{"reference": ref, "askslack": ask}
}

// BenchmarkParseClick decodes a click payload into slack-go's
// InteractionCallback, as both transports do for every interaction:
//
//	go test -run '^$' -bench ParseClick -benchmem ./slackbot/
func BenchmarkParseClick(b *testing.B) {
	for name, raw := range clickPayloads(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				var ic slack.InteractionCallback
				if err := json.Unmarshal(raw, &ic); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// sign is Slack's v0 signature: "v0=" + hex(HMAC-SHA256(secret, "v0:ts:body")).
func sign(secret string, ts int64, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + strconv.FormatInt(ts, 10) + ":" + body))
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

type nopDispatcher struct{}

func (nopDispatcher) Handle(context.Context, *slack.InteractionCallback) any { return nil }

// BenchmarkInteractionAck is the HTTP path of a click up to its ack: read
// the form body, verify the signature, parse, dispatch (a no-op here).
func BenchmarkInteractionAck(b *testing.B) {
	const secret = "bench-secret"
	h := slackbot.HTTPHandler(nopDispatcher{}, secret, slog.New(slog.DiscardHandler))
	for name, raw := range clickPayloads(b) {
		body := "payload=" + url.QueryEscape(string(raw))
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				ts := time.Now().Unix()
				r := httptest.NewRequest(http.MethodPost, "/slack/interactions", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
				r.Header.Set("X-Slack-Signature", sign(secret, ts, body))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("ack %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
