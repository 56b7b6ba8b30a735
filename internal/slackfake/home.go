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
	if !known || !s.reachesUserLocked(s.caller, u) {
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
	if in := s.callerLocked(); in != s.ws.implicit {
		// The Home tab of this installation's bot, in the user's workspace it serves.
		v.inst, v.team = in.key(), s.dmTeamLocked(in, u.ID)
	}
	req, _ := decodeJSON([]byte(raw))
	vm := obj(req)
	blocks, _ := vm["blocks"].([]any)
	normalizeBlocks(blocks)
	v.Hash = s.newHashLocked()
	v.JSON = marshal(s.viewJSON(v, vm))
	// The client shows the new view from its initial values: what the
	// person had ticked in the old one and not submitted is gone.
	delete(s.userState, homeStateKey(u.ID))
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
	domain := s.opts.TeamDomain
	if s.multiLocked() {
		domain = s.teamLocked(s.actingTeamLocked(s.caller, ch)).Domain
	}
	link := fmt.Sprintf("https://%s.slack.com/archives/%s/p%s", domain, ch, strings.ReplaceAll(m.TS, ".", ""))
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
	bot := s.botUserLocked()
	if slices.Contains(s.reach.reactions[k][name], bot) {
		return fail("already_reacted")
	}
	s.reach.reactions[k][name] = append(s.reach.reactions[k][name], bot)
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
	bot, team := s.opts.BotUserID, s.opts.TeamID
	if s.multiLocked() {
		// The bot of the installation serving the channel; the message is
		// from the user's own workspace.
		if in := s.channelInstallLocked(channel); in != nil {
			bot = in.BotUserID
		}
		team = s.fullUserLocked(user).TeamID
	}
	full := "<@" + bot + "> " + text
	m := &Message{Channel: channel, TS: s.nextTSLocked(), Text: full, User: user.ID, team: team}
	if _, found := s.messages[msgKey{channel, threadTS}]; found {
		m.ThreadTS = threadTS
	}
	s.storeMessageLocked(m)
	ev := map[string]any{
		"client_msg_id": newUUID(), "type": "app_mention", "text": full, "user": user.ID,
		"ts": m.TS, "team": team, "channel": channel, "event_ts": m.TS,
		"blocks": []any{map[string]any{"type": "rich_text", "block_id": randAlnum(4), "elements": []any{
			map[string]any{"type": "rich_text_section", "elements": []any{
				map[string]any{"type": "user", "user_id": bot},
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
// block_actions payload as Slack sends one from a Home tab (see homePayload).
func (s *Server) ClickHome(ctx context.Context, user User, blockPrefix, buttonText string, d Delivery) (Response, error) {
	v, found := s.Home(user.ID)
	if !found {
		return Response{}, fmt.Errorf("%w: no Home tab published for %s", ErrNotFound, user.ID)
	}
	return s.ClickHomeIn(ctx, v, user, blockPrefix, buttonText, d)
}

// ClickHomeIn is ClickHome in v, a Home tab taken earlier (Home): a client
// that still shows it, not the tab published since.
func (s *Server) ClickHomeIn(ctx context.Context, v View, user User, blockPrefix, buttonText string, d Delivery) (Response, error) {
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
	payload, err := s.homePayload(v, user, action)
	if err != nil {
		return Response{}, err
	}
	return s.Deliver(ctx, payload, d)
}

// homeStateKey is where a user's client-side state of their Home tab is
// kept: what they ticked and chose since it was last published.
func homeStateKey(userID string) stateKey { return stateKey{channel: "home", user: userID} }

// homePayload is a block_actions payload from user's Home tab v, shaped
// like real captures: container {type: view, view_id}, the view (type home,
// with its hash) carrying the current values of its stateful elements in
// view.state.values, and no top-level state, message, channel or
// response_url (Slack sends none of them for a Home tab).
func (s *Server) homePayload(v View, user User, action map[string]any) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.viewOriginLocked(&v, user)
	if err != nil {
		return nil, err
	}
	view := obj(mustDecode(v.JSON))
	blocks, _ := view["blocks"].([]any)
	view["state"] = map[string]any{"values": stateValues(blocks, s.userState[homeStateKey(user.ID)])}
	action["action_ts"] = s.nextTSLocked()
	return map[string]any{
		"type": "block_actions", "user": s.payloadUser(user), "api_app_id": s.opts.AppID,
		"token": s.opts.VerificationToken, "container": map[string]any{"type": "view", "view_id": v.ID},
		"trigger_id": s.issueTriggerForLocked(o.team.ID, user.ID, ""), "team": o.teamJSON(),
		"enterprise": s.enterpriseJSON(o.team), "is_enterprise_install": o.in.OrgWide,
		"view": view, "actions": []any{action},
	}, nil
}

// SelectHome picks options in a checkboxes, radio_buttons or select
// element of user's Home tab, found by block_id (a Home tab lists several
// questions, whose elements share action ids), and delivers the
// block_actions payload Slack sends for it. optionTexts is the complete new
// selection, as for Select. The selection is remembered until the tab is
// published again, so later clicks carry it in view.state.values.
func (s *Server) SelectHome(ctx context.Context, user User, blockID string, optionTexts []string, d Delivery) (Response, error) {
	v, found := s.Home(user.ID)
	if !found {
		return Response{}, fmt.Errorf("%w: no Home tab published for %s", ErrNotFound, user.ID)
	}
	r, err := findSelectable(decodeBlocks(viewBlocks(v.JSON)), blockID)
	if err != nil {
		return Response{}, err
	}
	sel, err := selection(r.el, optionTexts)
	if err != nil {
		return Response{}, err
	}
	typ, aid := str(r.el, "type"), str(r.el, "action_id")
	field := selectionField(typ)
	action := map[string]any{"type": typ, "block_id": r.blockID, "action_id": aid, field: sel}
	if typ != "overflow" {
		s.mu.Lock()
		k := homeStateKey(user.ID)
		if s.userState[k] == nil {
			s.userState[k] = map[string]map[string]map[string]any{}
		}
		if s.userState[k][r.blockID] == nil {
			s.userState[k][r.blockID] = map[string]map[string]any{}
		}
		s.userState[k][r.blockID][aid] = map[string]any{"type": typ, field: sel}
		s.notifyLocked() // what the person's client shows changed (MessageState, HomeState)
		s.mu.Unlock()
	}
	payload, err := s.homePayload(v, user, action)
	if err != nil {
		return Response{}, err
	}
	return s.Deliver(ctx, payload, d)
}

// ToggleHomeCheckbox ticks or unticks one box of the checkboxes in block
// blockID of user's Home tab, as one click does.
func (s *Server) ToggleHomeCheckbox(ctx context.Context, user User, blockID, optionText string, d Delivery) (Response, error) {
	v, found := s.Home(user.ID)
	if !found {
		return Response{}, fmt.Errorf("%w: no Home tab published for %s", ErrNotFound, user.ID)
	}
	r, err := findSelectable(decodeBlocks(viewBlocks(v.JSON)), blockID)
	if err != nil {
		return Response{}, err
	}
	if str(r.el, "type") != "checkboxes" {
		return Response{}, fmt.Errorf("%w: %q is a %s, not checkboxes", ErrNoControl, blockID, str(r.el, "type"))
	}
	target, err := findOption(r.el, optionText)
	if err != nil {
		return Response{}, err
	}
	s.mu.Lock()
	cur := elementState(r.el, s.userState[homeStateKey(user.ID)][r.blockID][str(r.el, "action_id")])
	s.mu.Unlock()
	var picks []string
	toggled := false
	list, _ := cur["selected_options"].([]any)
	for _, o := range list {
		if str(obj(o), "value") == str(target, "value") {
			toggled = true
			continue
		}
		picks = append(picks, str(obj(o), "value"))
	}
	if !toggled {
		picks = append(picks, str(target, "value"))
	}
	return s.SelectHome(ctx, user, blockID, picks, d)
}

// HomeState returns the current values of the stateful elements of user's
// Home tab, as the next click from it would carry them in
// view.state.values (blockID → actionID → entry).
func (s *Server) HomeState(userID string) map[string]any {
	v, found := s.Home(userID)
	if !found {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return stateValues(decodeBlocks(viewBlocks(v.JSON)), s.userState[homeStateKey(userID)])
}

func mustDecode(raw []byte) any {
	v, _ := decodeJSON(raw)
	return v
}

func viewBlocks(view json.RawMessage) []byte {
	var v struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	_ = json.Unmarshal(view, &v)
	return v.Blocks
}
