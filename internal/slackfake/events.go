package slackfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/askslack/askslack/internal/blockcheck"
)

// Events API and slash commands, delivered like Slack delivers them:
//
//   - over HTTP: an event_callback envelope as a JSON POST to the events URL,
//     a slash command as a form POST to the commands URL, both signed like
//     interactions (v0 signature, X-Slack-Request-Timestamp);
//   - over Socket Mode: an "events_api" or "slash_commands" envelope that
//     the client must ack (a slash command's ack may carry the response).
//
// Shapes follow testdata/socketmode_frames.json (https://api.slack.com/apis/socket-mode).

// reachState is the part of the fake's state this file and home.go own;
// guarded by Server.mu.
type reachState struct {
	eventsURL, commandsURL string
	homes                  map[string]*View               // user id → published Home tab
	reactions              map[msgKey]map[string][]string // message → reaction name → users
}

// SetEventsURL sets where HTTP event deliveries go (the app's /slack/events).
func (s *Server) SetEventsURL(u string) {
	s.mu.Lock()
	s.reach.eventsURL = u
	s.mu.Unlock()
}

// SetCommandsURL sets where HTTP slash commands go (the app's /slack/commands).
func (s *Server) SetCommandsURL(u string) {
	s.mu.Lock()
	s.reach.commandsURL = u
	s.mu.Unlock()
}

// EventReceipt is the app's answer to an event delivery and the event_id it
// carried (send the same id again to model Slack's redelivery).
type EventReceipt struct {
	Response
	EventID string
}

// SendEvent wraps event (an inner event object: any JSON-marshalable value
// or JSON bytes with a "type") in an event_callback envelope and delivers
// it. eventID "" gets a fresh id; pass an earlier receipt's EventID (with
// d.RetryNum > 0, as Slack marks it) to redeliver the same event.
func (s *Server) SendEvent(ctx context.Context, event any, eventID string, d Delivery) (EventReceipt, error) {
	raw, err := rawJSON(event)
	if err != nil {
		return EventReceipt{}, err
	}
	var about struct {
		Channel any    `json:"channel"` // a string, or an object in some events
		User    any    `json:"user"`
		Type    string `json:"type"`
	}
	_ = json.Unmarshal(raw, &about)
	ch, _ := about.Channel.(string)
	uid, _ := about.User.(string)
	s.mu.Lock()
	o, err := s.eventOriginLocked(ch, User{ID: uid})
	if err != nil {
		s.mu.Unlock()
		return EventReceipt{}, err
	}
	if eventID == "" {
		eventID = s.newIDLocked("Ev")
	}
	env := s.envelopeLocked(o, raw, eventID, ch)
	target := s.reach.eventsURL
	s.mu.Unlock()
	return s.deliverEvent(ctx, env, eventID, target, d)
}

// envelopeLocked is the event_callback envelope of an inner event for
// origin o about channel ch ("" none). In a single-workspace fake it is
// what it always was; with several workspaces it also names the
// enterprise and context_team_id / context_enterprise_id
// (https://docs.slack.dev/tools/bolt-js/reference/interfaces/EnvelopedEvent),
// and is_ext_shared_channel is true in a Slack Connect channel.
func (s *Server) envelopeLocked(o origin, raw []byte, eventID, ch string) map[string]any {
	env := map[string]any{
		"token": s.opts.VerificationToken, "team_id": o.team.ID, "api_app_id": s.opts.AppID,
		"event": json.RawMessage(raw), "type": "event_callback", "event_id": eventID,
		"event_time": s.opts.Now().Unix(), "is_ext_shared_channel": false,
		"event_context":  "4-" + randAlnum(24),
		"authorizations": []any{s.authorizationJSON(o)},
	}
	if s.multiLocked() {
		auth := s.authorizationJSON(o)
		env["enterprise_id"] = auth["enterprise_id"]
		env["context_team_id"] = o.team.ID
		env["context_enterprise_id"] = auth["enterprise_id"]
		env["is_ext_shared_channel"] = ch != "" && s.extSharedLocked(ch)
	}
	return env
}

// deliverEvent delivers an envelope over Socket Mode or HTTP.
func (s *Server) deliverEvent(ctx context.Context, env map[string]any, eventID, target string, d Delivery) (EventReceipt, error) {
	var err error
	body := marshal(env)
	t := s.pickTransport(d)
	s.logf("slackfake: event %s over %s", eventID, t)
	var res Response
	if t == TransportSocket {
		res, err = s.deliverEnvelope(ctx, body, "events_api", false, d)
	} else if target == "" {
		err = ErrNoTransport
	} else {
		res, err = s.postSigned(ctx, target, "application/json", body, d)
	}
	return EventReceipt{Response: res, EventID: eventID}, err
}

// pickTransport resolves TransportAuto: Socket Mode when a client is
// connected, else HTTP.
func (s *Server) pickTransport(d Delivery) Transport {
	if d.Transport != TransportAuto {
		return d.Transport
	}
	if s.SocketClients() > 0 {
		return TransportSocket
	}
	return TransportHTTP
}

func rawJSON(v any) ([]byte, error) {
	raw, typ, err := typedJSON(v)
	if err != nil || typ == "" {
		return nil, fmt.Errorf("slackfake: an event must be a JSON object with a type (%v)", err)
	}
	return raw, nil
}

// typedJSON is v as JSON (JSON bytes as they are, anything else marshalled)
// and its "type" field.
func typedJSON(v any) ([]byte, string, error) {
	var raw []byte
	switch p := v.(type) {
	case json.RawMessage:
		raw = p
	case []byte:
		raw = p
	default:
		raw = marshal(p)
	}
	var head struct {
		Type string `json:"type"`
	}
	err := json.Unmarshal(raw, &head)
	return raw, head.Type, err
}

// Command is one slash command invocation.
type Command struct {
	User    User
	Channel string
	Command string // e.g. "/askslack"
	Text    string
}

// SendCommand delivers a slash command and applies the app's immediate
// response as Slack does: a JSON body (HTTP) or ack payload (Socket Mode)
// with text or blocks is shown to the user, ephemerally unless its
// response_type is "in_channel"; a plain-text HTTP body is shown as text.
// The command carries a response_url served by the fake (Ephemerals).
func (s *Server) SendCommand(ctx context.Context, c Command, d Delivery) (Response, error) {
	s.mu.Lock()
	o, err := s.commandOriginLocked(c.User, c.Channel)
	if err != nil {
		s.mu.Unlock()
		return Response{}, err
	}
	// The fields of Slack's example command
	// (https://docs.slack.dev/interactivity/implementing-slash-commands):
	// enterprise_id and enterprise_name in a Grid workspace.
	fields := map[string]string{
		"token": s.opts.VerificationToken, "team_id": o.team.ID, "team_domain": o.team.Domain,
		"channel_id": c.Channel, "channel_name": channelName(c.Channel),
		"user_id": c.User.ID, "user_name": str(s.payloadUser(c.User), "name"),
		"command": c.Command, "text": c.Text, "api_app_id": s.opts.AppID,
		"is_enterprise_install": fmt.Sprint(o.in.OrgWide),
		"response_url":          s.issueResponseURLForLocked(o.in, o.team.ID, c.Channel, "", c.User.ID),
		"trigger_id":            s.issueTriggerForLocked(o.team.ID, c.User.ID, ""),
	}
	if e := o.team.EnterpriseID; e != "" {
		fields["enterprise_id"], fields["enterprise_name"] = e, o.team.EnterpriseName
	}
	target := s.reach.commandsURL
	s.mu.Unlock()
	t := s.pickTransport(d)
	s.logf("slackfake: command %s %q over %s", c.Command, c.Text, t)
	var res Response
	if t == TransportSocket {
		res, err = s.deliverEnvelope(ctx, marshal(fields), "slash_commands", true, d)
	} else if target == "" {
		err = ErrNoTransport
	} else {
		form := url.Values{}
		for k, v := range fields {
			form.Set(k, v)
		}
		res, err = s.postSigned(ctx, target, "application/x-www-form-urlencoded", []byte(form.Encode()), d)
	}
	if err == nil {
		err = s.applyCommandResponse(c, res)
	}
	return res, err
}

// applyCommandResponse shows the immediate response to a slash command.
func (s *Server) applyCommandResponse(c Command, res Response) error {
	if res.Status != 0 && res.Status != 200 {
		return nil // Slack shows the user an error; nothing is stored
	}
	body := res.Body
	if len(body) == 0 || string(body) == "null" {
		return nil
	}
	var r responseURLReq
	if json.Unmarshal(body, &r) != nil {
		if res.Transport == TransportSocket {
			return fmt.Errorf("%w: slash command ack payload is not JSON: %s", ErrBadViewResponse, body)
		}
		r = responseURLReq{Text: string(body)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ru := &responseURL{channel: c.Channel, user: c.User.ID, issued: s.opts.Now()}
	if rep := s.respondCheckedLocked(ru, r); !rep.body["ok"].(bool) {
		return fmt.Errorf("slackfake: Slack would reject the command response: %s", marshal(rep.body))
	}
	return nil
}

// respondCheckedLocked checks a response's blocks and applies it.
func (s *Server) respondCheckedLocked(ru *responseURL, r responseURLReq) reply {
	blocks := r.Blocks
	if string(blocks) == "null" {
		blocks = nil
	}
	if r.Text == "" && len(blocks) == 0 {
		return ok()
	}
	if rep, bad := checkMessage(r.Text, blocks); bad {
		return rep
	}
	return s.respondLocked(ru, msgKey{ru.channel, ru.ts}, r, blocks)
}

// checkMessage runs the Block Kit limits checker on a message payload.
func checkMessage(text string, blocks []byte) (reply, bool) {
	if err := blockcheck.Message(text, json.RawMessage(blocks)); err != nil {
		return blocksFail("invalid_blocks", err), true
	}
	return reply{}, false
}
