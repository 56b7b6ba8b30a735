package slackbot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
)

// A question's message is posted once and updated a few times; those two
// calls are most of the bot's Slack traffic. slack-go sends them
// form-encoded (the blocks as a JSON string, then URL-escaped: a quarter of
// the bytes the bot allocates per ask) and decodes the whole message Slack
// echoes back. Chat sends them as JSON bodies, which Slack's write methods
// accept, and reads only what the bot uses from the answer; its errors are
// slack-go's types, so retries, rate limits and refusals read them as
// before.

// ChatMessage is the body of chat.postMessage (TS empty) or chat.update.
// Links and media never unfurl, as with msgOptions.
type ChatMessage struct {
	Channel        string               `json:"channel"`
	TS             string               `json:"ts,omitempty"`
	Text           string               `json:"text"`
	Blocks         []slack.Block        `json:"blocks,omitempty"`
	ThreadTS       string               `json:"thread_ts,omitempty"`
	ReplyBroadcast bool                 `json:"reply_broadcast,omitempty"`
	Metadata       *slack.SlackMetadata `json:"metadata,omitempty"`
}

// chatBody is a ChatMessage as sent: with unfurling turned off.
type chatBody struct {
	*ChatMessage
	UnfurlLinks bool `json:"unfurl_links"`
	UnfurlMedia bool `json:"unfurl_media"`
}

// chatMessage is a question message's body: msg's text and blocks.
func chatMessage(channel string, msg blocks.Message) *ChatMessage {
	return &ChatMessage{Channel: channel, Text: msg.Text, Blocks: msg.Blocks}
}

// Chat posts and updates messages.
type Chat interface {
	// PostMessage is chat.postMessage; it returns where the message went.
	PostMessage(ctx context.Context, m *ChatMessage) (channel, ts string, err error)
	// UpdateMessage is chat.update of m.Channel, m.TS.
	UpdateMessage(ctx context.Context, m *ChatMessage) error
}

// JSONChat is Chat over Slack's Web API with JSON bodies.
type JSONChat struct {
	client *http.Client
	url    string // ends with "/"
	token  string
}

// NewJSONChat returns a Chat that calls apiURL ("" for Slack's) with token
// through client (share the slack-go client's, for one connection pool).
func NewJSONChat(client *http.Client, apiURL, token string) *JSONChat {
	if apiURL == "" {
		apiURL = slack.APIURL
	}
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	return &JSONChat{client: client, url: apiURL, token: token}
}

// PostMessage implements Chat.
func (c *JSONChat) PostMessage(ctx context.Context, m *ChatMessage) (string, string, error) {
	out, err := c.call(ctx, "chat.postMessage", m)
	return out.Channel, out.TS, err
}

// UpdateMessage implements Chat.
func (c *JSONChat) UpdateMessage(ctx context.Context, m *ChatMessage) error {
	_, err := c.call(ctx, "chat.update", m)
	return err
}

// chatAnswer is what the bot reads of Slack's answer; the message echoed
// back is skipped.
type chatAnswer struct {
	slack.SlackResponse
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// bodies recycles request buffers: a message is a few kilobytes.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (c *JSONChat) call(ctx context.Context, method string, m *ChatMessage) (chatAnswer, error) {
	var out chatAnswer
	buf := bodies.Get().(*bytes.Buffer)
	buf.Reset()
	defer bodies.Put(buf)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false) // mentions stay <@U…>; Slack reads either
	if err := enc.Encode(chatBody{ChatMessage: m}); err != nil {
		return out, fmt.Errorf("slackbot: encoding %s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+method, bytes.NewReader(buf.Bytes()))
	if err != nil {
		return out, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.client.Do(req)
	if err != nil {
		return out, err
	}
	defer func() {
		// Drain a little, so the connection goes back to the pool.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}()
	if err := statusError(resp); err != nil {
		return out, err
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("slackbot: reading %s's answer: %w", method, err)
	}
	return out, out.Err()
}

// statusError is slack-go's reading of a non-200 answer: a rate limit
// with its Retry-After, or the status.
func statusError(resp *http.Response) error {
	if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "" {
		secs, err := strconv.ParseInt(resp.Header.Get("Retry-After"), 10, 64)
		if err != nil {
			return err
		}
		return &slack.RateLimitedError{RetryAfter: time.Duration(secs) * time.Second}
	}
	if resp.StatusCode != http.StatusOK {
		return slack.StatusCodeError{Code: resp.StatusCode, Status: resp.Status}
	}
	return nil
}

// apiChat is Chat through slack-go (form-encoded), for a Surface built
// without one.
type apiChat struct{ api API }

func (c apiChat) PostMessage(ctx context.Context, m *ChatMessage) (string, string, error) {
	return c.api.PostMessageContext(ctx, m.Channel, m.options()...)
}

func (c apiChat) UpdateMessage(ctx context.Context, m *ChatMessage) error {
	_, _, _, err := c.api.UpdateMessageContext(ctx, m.Channel, m.TS, m.options()...)
	return err
}

// options are m's fields as slack-go options.
func (m *ChatMessage) options() []slack.MsgOption {
	opts := msgOptions(blocks.Message{Text: m.Text, Blocks: m.Blocks})
	if m.ThreadTS != "" {
		opts = append(opts, slack.MsgOptionTS(m.ThreadTS))
	}
	if m.ReplyBroadcast {
		opts = append(opts, slack.MsgOptionBroadcast())
	}
	if m.Metadata != nil {
		opts = append(opts, slack.MsgOptionMetadata(*m.Metadata))
	}
	return opts
}
