package slackfake

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/askslack/askslack/internal/blockcheck"
)

// The Web API methods of App Home, permalinks and reactions, and the
// events and clicks that come from them.

func init() {
	apiMethods["views.publish"] = (*Server).viewsPublish
	apiMethods["chat.getPermalink"] = (*Server).chatGetPermalink
	apiMethods["reactions.add"] = (*Server).reactionsAdd
}

// viewsPublish stores a user's Home tab. The view must be a valid "home"
// view (blockcheck.Home: at most 100 blocks, …); a hash, when given, must
// be the current one (hash_conflict otherwise), as on Slack.
func (s *Server) viewsPublish(p map[string]string) reply {
	u, known := s.user(p["user_id"])
	if !known {
		return fail("user_not_found")
	}
	raw := p["view"]
	if raw == "" {
		return fail("invalid_arguments")
	}
	if err := blockcheck.Home(json.RawMessage(raw)); err != nil {
		return blocksFail("invalid_arguments", err)
	}
	if s.reach.homes == nil {
		s.reach.homes = map[string]*View{}
	}
	v := s.reach.homes[u.ID]
	if v != nil && p["hash"] != "" && p["hash"] != v.Hash {
		return fail("hash_conflict")
	}
	if v == nil {
		v = &View{ID: s.newIDLocked("V"), UserID: u.ID}
		v.RootID = v.ID
		s.reach.homes[u.ID] = v
	} else {
		v.Updated++
	}
	req, _ := decodeJSON([]byte(raw))
	vm := obj(req)
	blocks, _ := vm["blocks"].([]any)
	normalizeBlocks(blocks)
	v.Hash = s.newHashLocked()
	v.JSON = marshal(s.viewJSON(v, vm))
	s.notifyLocked()
	return ok("view", json.RawMessage(v.JSON))
}

// Home returns the Home tab last published for userID.
func (s *Server) Home(userID string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, found := s.reach.homes[userID]
	if !found {
		return View{}, false
	}
	return v.copy(), true
}

// chatGetPermalink answers a message's permalink in Slack's form
// (https://<domain>.slack.com/archives/<channel>/p<ts without the dot>,
// plus thread_ts and cid for a reply).
func (s *Server) chatGetPermalink(p map[string]string) reply {
	ch := p["channel"]
	if !s.channelExistsLocked(ch) {
		return fail("channel_not_found")
	}
	m, found := s.messages[msgKey{ch, p["message_ts"]}]
	if !found {
		return fail("message_not_found")
	}
	link := fmt.Sprintf("https://%s.slack.com/archives/%s/p%s", s.opts.TeamDomain, ch, strings.ReplaceAll(m.TS, ".", ""))
	if m.ThreadTS != "" {
		link += "?thread_ts=" + m.ThreadTS + "&cid=" + ch
	}
	return ok("channel", ch, "permalink", link)
}

// reactionsAdd adds the bot's reaction to a message: already_reacted the
// second time, as on Slack.
func (s *Server) reactionsAdd(p map[string]string) reply {
	ch, name := p["channel"], strings.Trim(p["name"], ":")
	if !s.channelExistsLocked(ch) {
		return fail("channel_not_found")
	}
	if name == "" {
		return fail("invalid_name")
	}
	k := msgKey{ch, p["timestamp"]}
	if _, found := s.messages[k]; !found {
		return fail("message_not_found")
	}
	if s.reach.reactions == nil {
		s.reach.reactions = map[msgKey]map[string][]string{}
	}
	if s.reach.reactions[k] == nil {
		s.reach.reactions[k] = map[string][]string{}
	}
	if slices.Contains(s.reach.reactions[k][name], s.opts.BotUserID) {
		return fail("already_reacted")
	}
	s.reach.reactions[k][name] = append(s.reach.reactions[k][name], s.opts.BotUserID)
	s.notifyLocked()
	return ok()
}

// Reactions returns the users who reacted with name to a message.
func (s *Server) Reactions(channel, ts, name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reach.reactions[msgKey{channel, ts}][name])
}

// Mention posts a message by user in channel (in threadTS's thread when
// set) that mentions the app, as a person typing "@app text" does, and
// returns the stored message and the app_mention event Slack sends for it
// (shaped like payloads/socketmode_frames.json), ready for SendEvent.
func (s *Server) Mention(user User, channel, threadTS, text string) (Message, map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	full := "<@" + s.opts.BotUserID + "> " + text
	m := &Message{Channel: channel, TS: s.nextTSLocked(), Text: full, User: user.ID}
	if _, found := s.messages[msgKey{channel, threadTS}]; found {
		m.ThreadTS = threadTS
	}
	s.storeMessageLocked(m)
	ev := map[string]any{
		"client_msg_id": newUUID(), "type": "app_mention", "text": full, "user": user.ID,
		"ts": m.TS, "team": s.opts.TeamID, "channel": channel, "event_ts": m.TS,
		"blocks": []any{map[string]any{"type": "rich_text", "block_id": randAlnum(4), "elements": []any{
			map[string]any{"type": "rich_text_section", "elements": []any{
				map[string]any{"type": "user", "user_id": s.opts.BotUserID},
				map[string]any{"type": "text", "text": " " + text},
			}},
		}}},
	}
	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
	}
	return *m, ev
}

// HomeOpened is the app_home_opened event Slack sends when user opens the
// app's Home tab (with the view last published for them, if any).
func (s *Server) HomeOpened(user User) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := map[string]any{
		"type": "app_home_opened", "user": user.ID, "channel": "D" + strings.TrimPrefix(user.ID, "U"),
		"tab": "home", "event_ts": s.nextTSLocked(),
	}
	if v, found := s.reach.homes[user.ID]; found {
		ev["view"] = json.RawMessage(v.JSON)
	}
	return ev
}

// ClickHome clicks the button labelled buttonText whose block_id starts
// with blockPrefix ("" for any) in user's current Home tab and delivers the
// block_actions payload: container {type: view, view_id}, the view instead
// of a message, no channel, as Slack sends for a Home tab.
func (s *Server) ClickHome(ctx context.Context, user User, blockPrefix, buttonText string, d Delivery) (Response, error) {
	v, found := s.Home(user.ID)
	if !found {
		return Response{}, fmt.Errorf("%w: no Home tab published for %s", ErrNotFound, user.ID)
	}
	var hit []elementRef
	for _, r := range elements(decodeBlocks(viewBlocks(v.JSON))) {
		if str(r.el, "type") == "button" && strings.HasPrefix(r.blockID, blockPrefix) && textOf(r.el["text"]) == buttonText {
			hit = append(hit, r)
		}
	}
	if len(hit) != 1 {
		return Response{}, fmt.Errorf("%w: %d buttons %q in blocks %q… of %s's Home tab", ErrNoControl, len(hit), buttonText, blockPrefix, user.ID)
	}
	b := hit[0]
	action := map[string]any{"action_id": str(b.el, "action_id"), "block_id": b.blockID, "text": b.el["text"], "type": "button"}
	if val, has := b.el["value"]; has {
		action["value"] = val
	}
	s.mu.Lock()
	action["action_ts"] = s.nextTSLocked()
	payload := map[string]any{
		"type": "block_actions", "user": s.payloadUser(user), "api_app_id": s.opts.AppID,
		"token": s.opts.VerificationToken, "container": map[string]any{"type": "view", "view_id": v.ID},
		"trigger_id": s.issueTriggerLocked(user.ID, ""), "team": s.team(), "enterprise": nil,
		"is_enterprise_install": false, "view": json.RawMessage(v.JSON),
		"state": map[string]any{"values": map[string]any{}}, "actions": []any{action},
	}
	s.mu.Unlock()
	return s.Deliver(ctx, payload, d)
}

func viewBlocks(view json.RawMessage) []byte {
	var v struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	_ = json.Unmarshal(view, &v)
	return v.Blocks
}
