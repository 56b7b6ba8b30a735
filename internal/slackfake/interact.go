package slackfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/askslack/askslack/internal/blockcheck"
)

// payloadUser is the "user" object of interaction payloads. A user who
// interacts with a message is a member of the workspace and the channel, so
// an unknown one is added (as Slack would know them). Called with s.mu held.
func (s *Server) payloadUser(u User) map[string]any {
	if _, ok := s.usersByID[u.ID]; !ok && u.ID != "" {
		s.usersByID[u.ID] = u
	}
	if known, ok := s.usersByID[u.ID]; ok {
		if u.Name == "" {
			u.Name = known.Name
		}
		if u.TeamID == "" {
			u.TeamID = known.TeamID
		}
	}
	if u.TeamID == "" {
		u.TeamID = s.opts.TeamID
	}
	return map[string]any{"id": u.ID, "username": u.Name, "name": u.Name, "team_id": u.TeamID}
}

func channelName(id string) string {
	switch {
	case strings.HasPrefix(id, "D"):
		return "directmessage"
	case strings.HasPrefix(id, "G"):
		return "privategroup"
	}
	return strings.ToLower(id)
}

// messagePayload builds a block_actions payload for an action on msg, shaped
// like payloads/block_actions_button.json plus the newer state.values. The
// state comes from msg's blocks (what the user's client shows) and the user's
// selections; "message" is the message as Slack stores it now (msg itself if
// it is gone), with its metadata when it was posted with some.
func (s *Server) messagePayload(msg Message, user User, action map[string]any) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := &msg
	if cur, ok := s.messages[msgKey{msg.Channel, msg.TS}]; ok {
		stored = cur
	}
	o, err := s.messageOriginLocked(msg.Channel, stored.inst)
	if err != nil {
		return nil, err
	}
	container := map[string]any{"type": "message", "message_ts": msg.TS, "channel_id": msg.Channel, "is_ephemeral": false}
	if msg.ThreadTS != "" {
		container["thread_ts"] = msg.ThreadTS
	}
	action["action_ts"] = s.nextTSLocked()
	state := stateValues(decodeBlocks(msg.Blocks), s.userState[stateKey{msg.Channel, msg.TS, user.ID}])
	message := s.messageJSON(stored)
	if len(stored.Metadata) > 0 {
		// The message as Slack stores it, its metadata included.
		message["metadata"] = stored.Metadata
	}
	return map[string]any{
		"type":                  "block_actions",
		"user":                  s.payloadUser(user),
		"api_app_id":            s.opts.AppID,
		"token":                 s.opts.VerificationToken,
		"container":             container,
		"trigger_id":            s.issueTriggerForLocked(o.team.ID, user.ID, ""),
		"team":                  o.teamJSON(),
		"enterprise":            s.enterpriseJSON(o.team),
		"is_enterprise_install": o.in.OrgWide,
		"channel":               map[string]any{"id": msg.Channel, "name": channelName(msg.Channel)},
		"message":               message,
		"state":                 map[string]any{"values": state},
		"response_url":          s.issueResponseURLForLocked(o.in, o.team.ID, msg.Channel, msg.TS, user.ID),
		"actions":               []any{action},
	}, nil
}

func (s *Server) currentMessage(channel, ts string) (Message, error) {
	m, ok := s.Message(channel, ts)
	if !ok {
		return Message{}, fmt.Errorf("%w: no message %s in %s", ErrNotFound, ts, channel)
	}
	return m, nil
}

// ClickButton clicks the button labelled buttonText in the current version of
// a stored message (actions blocks and section accessories) and delivers the
// block_actions payload. It fails with ErrNoControl if the message has no such
// button now, and ErrAmbiguous if several match (use ClickButtonByAction).
func (s *Server) ClickButton(ctx context.Context, user User, channel, ts, buttonText string, d Delivery) (Response, error) {
	m, err := s.currentMessage(channel, ts)
	if err != nil {
		return Response{}, err
	}
	return s.ClickButtonIn(ctx, m, user, buttonText, d)
}

// ClickButtonIn clicks a button in msg, a snapshot taken earlier (say, before
// another user's click changed the message): the action comes from the
// snapshot, as from a client that has not refreshed yet.
func (s *Server) ClickButtonIn(ctx context.Context, msg Message, user User, buttonText string, d Delivery) (Response, error) {
	return s.click(ctx, msg, user, fmt.Sprintf("button %q", buttonText), func(r elementRef) bool {
		return textOf(r.el["text"]) == buttonText
	}, d)
}

// ClickButtonByAction clicks the button with action_id actionID (and value,
// unless value is "") in the current version of a stored message.
func (s *Server) ClickButtonByAction(ctx context.Context, user User, channel, ts, actionID, value string, d Delivery) (Response, error) {
	m, err := s.currentMessage(channel, ts)
	if err != nil {
		return Response{}, err
	}
	return s.click(ctx, m, user, fmt.Sprintf("button with action_id %q value %q", actionID, value), func(r elementRef) bool {
		return str(r.el, "action_id") == actionID && (value == "" || str(r.el, "value") == value)
	}, d)
}

func (s *Server) click(ctx context.Context, msg Message, user User, desc string, match func(elementRef) bool, d Delivery) (Response, error) {
	var found []elementRef
	var have []string
	for _, r := range elements(decodeBlocks(msg.Blocks)) {
		if str(r.el, "type") != "button" {
			continue
		}
		have = append(have, fmt.Sprintf("%q (%s)", textOf(r.el["text"]), str(r.el, "action_id")))
		if match(r) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return Response{}, fmt.Errorf("%w: no %s in message %s (buttons: %s)", ErrNoControl, desc, msg.TS, strings.Join(have, ", "))
	case 1:
	default:
		return Response{}, fmt.Errorf("%w: %d of %s in message %s", ErrAmbiguous, len(found), desc, msg.TS)
	}
	b := found[0]
	action := map[string]any{
		"action_id": str(b.el, "action_id"),
		"block_id":  b.blockID,
		"text":      b.el["text"],
		"type":      "button",
	}
	for _, k := range []string{"value", "style", "url"} {
		if v, ok := b.el[k]; ok {
			action[k] = v
		}
	}
	payload, err := s.messagePayload(msg, user, action)
	if err != nil {
		return Response{}, err
	}
	return s.Deliver(ctx, payload, d)
}

var selectableTypes = map[string]bool{
	"checkboxes": true, "radio_buttons": true, "static_select": true, "multi_static_select": true,
	"overflow": true, "users_select": true, "multi_users_select": true,
	"conversations_select": true, "multi_conversations_select": true,
}

// findSelectable finds the selectable element with action_id id, or the only
// one in the block with block_id id.
func findSelectable(blocks []any, id string) (elementRef, error) {
	var found []elementRef
	for _, r := range elements(blocks) {
		if selectableTypes[str(r.el, "type")] && (str(r.el, "action_id") == id || r.blockID == id) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return elementRef{}, fmt.Errorf("%w: no checkboxes/radio/select/overflow with action_id or block_id %q", ErrNoControl, id)
	case 1:
		return found[0], nil
	}
	return elementRef{}, fmt.Errorf("%w: %d elements match %q; use the action_id", ErrAmbiguous, len(found), id)
}

// selection turns what a user picks (option texts, or ids for user and
// conversation selects) into the element's selection value.
func selection(el map[string]any, picks []string) (any, error) {
	typ := str(el, "type")
	multi := isMulti(typ)
	if !multi && len(picks) != 1 && typ != "plain_text_input" {
		return nil, fmt.Errorf("%w: %s %q takes exactly one choice, got %d", ErrClientValidation, typ, str(el, "action_id"), len(picks))
	}
	if max, ok := el["max_selected_items"].(json.Number); ok {
		if n, err := max.Int64(); err == nil && int64(len(picks)) > n {
			return nil, fmt.Errorf("%w: %q allows at most %d items, got %d", ErrClientValidation, str(el, "action_id"), n, len(picks))
		}
	}
	switch typ {
	case "users_select", "conversations_select":
		return picks[0], nil
	case "multi_users_select", "multi_conversations_select":
		return append([]string{}, picks...), nil
	}
	var list []any
	for _, p := range picks {
		o, err := findOption(el, p)
		if err != nil {
			return nil, err
		}
		list = append(list, o)
	}
	if !multi {
		return list[0], nil
	}
	if list == nil {
		list = []any{}
	}
	return list, nil
}

// Select picks options in a checkboxes, radio_buttons, static_select,
// multi_static_select or overflow element (or user/conversation ids in those
// selects) of a stored message, found by action_id (or by the block_id of a
// block holding just one such element), and delivers the block_actions
// payload Slack sends for it. optionTexts (option text, or value) is the
// complete new selection — for checkboxes every ticked box, nil to untick all.
// The user's selection is remembered, so later payloads from the message
// (say, a Submit click) carry it in state.values.
func (s *Server) Select(ctx context.Context, user User, channel, ts, actionID string, optionTexts []string, d Delivery) (Response, error) {
	m, err := s.currentMessage(channel, ts)
	if err != nil {
		return Response{}, err
	}
	r, err := findSelectable(decodeBlocks(m.Blocks), actionID)
	if err != nil {
		return Response{}, err
	}
	sel, err := selection(r.el, optionTexts)
	if err != nil {
		return Response{}, err
	}
	typ := str(r.el, "type")
	field := selectionField(typ)
	aid := str(r.el, "action_id")
	action := map[string]any{"type": typ, "block_id": r.blockID, "action_id": aid, field: sel}
	if p, ok := r.el["placeholder"]; ok {
		action["placeholder"] = p
	}
	if typ != "overflow" {
		s.mu.Lock()
		k := stateKey{channel, ts, user.ID}
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
	payload, err := s.messagePayload(m, user, action)
	if err != nil {
		return Response{}, err
	}
	return s.Deliver(ctx, payload, d)
}

// ToggleCheckbox ticks or unticks one box of a checkboxes element, as one
// click does, and delivers the payload with every box ticked after it.
func (s *Server) ToggleCheckbox(ctx context.Context, user User, channel, ts, actionID, optionText string, d Delivery) (Response, error) {
	m, err := s.currentMessage(channel, ts)
	if err != nil {
		return Response{}, err
	}
	r, err := findSelectable(decodeBlocks(m.Blocks), actionID)
	if err != nil {
		return Response{}, err
	}
	if str(r.el, "type") != "checkboxes" {
		return Response{}, fmt.Errorf("%w: %q is a %s, not checkboxes", ErrNoControl, actionID, str(r.el, "type"))
	}
	target, err := findOption(r.el, optionText)
	if err != nil {
		return Response{}, err
	}
	s.mu.Lock()
	cur := elementState(r.el, s.userState[stateKey{channel, ts, user.ID}][r.blockID][str(r.el, "action_id")])
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
	return s.Select(ctx, user, channel, ts, str(r.el, "action_id"), picks, d)
}

// openView returns a decoded copy of an open view the user may act on.
func (s *Server) openView(user User, viewID string) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.views[viewID]
	if !ok || v.Closed {
		return nil, fmt.Errorf("%w: no open view %s", ErrNotFound, viewID)
	}
	if v.UserID != "" && v.UserID != user.ID {
		return nil, fmt.Errorf("%w: view %s is open for %s, not %s", ErrClientValidation, viewID, v.UserID, user.ID)
	}
	j, _ := decodeJSON(v.JSON)
	return obj(j), nil
}

func isEmptySelection(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case []string:
		return len(x) == 0
	}
	return false
}

// submitState builds a view's state.values from the user's input, keyed by
// input block_id, and checks what Slack's client checks before it sends a
// view_submission: required inputs, min_length/max_length.
func submitState(blocks []any, values map[string][]string) (map[string]any, error) {
	inputs := map[string]bool{}
	for _, b := range blocks {
		if str(obj(b), "type") == "input" {
			inputs[str(obj(b), "block_id")] = true
		}
	}
	for k := range values {
		if !inputs[k] {
			return nil, fmt.Errorf("%w: no input block %q in the view", ErrNoControl, k)
		}
	}
	state := map[string]any{}
	for _, r := range elements(blocks) {
		typ := str(r.el, "type")
		if !statefulTypes[typ] {
			continue
		}
		entry := elementState(r.el, nil)
		if str(r.block, "type") == "input" {
			if err := fillInput(r, typ, entry, values); err != nil {
				return nil, err
			}
		}
		byAction, _ := state[r.blockID].(map[string]any)
		if byAction == nil {
			byAction = map[string]any{}
			state[r.blockID] = byAction
		}
		byAction[str(r.el, "action_id")] = entry
	}
	return state, nil
}

// fillInput sets an input element's submitted value from values (when
// given) and checks what Slack's client checks before it submits.
func fillInput(r elementRef, typ string, entry map[string]any, values map[string][]string) error {
	if picks, given := values[r.blockID]; given {
		switch {
		case typ == "plain_text_input":
			if len(picks) > 1 {
				return fmt.Errorf("%w: text input %q takes one value", ErrClientValidation, r.blockID)
			}
			entry["value"] = nil
			if len(picks) == 1 && picks[0] != "" {
				entry["value"] = picks[0]
			}
		case len(picks) == 0 && !isMulti(typ):
			entry[selectionField(typ)] = nil
		default:
			sel, err := selection(r.el, picks)
			if err != nil {
				return err
			}
			entry[selectionField(typ)] = sel
		}
	}
	sel := entry[selectionField(typ)]
	if optional, _ := r.block["optional"].(bool); !optional && isEmptySelection(sel) {
		return fmt.Errorf("%w: input %q is required", ErrClientValidation, r.blockID)
	}
	if text, ok := sel.(string); ok && typ == "plain_text_input" {
		return checkLength(r, int64(utf8.RuneCountInString(text)))
	}
	return nil
}

// checkLength enforces a text input's min_length and max_length.
func checkLength(r elementRef, n int64) error {
	if min, ok := r.el["min_length"].(json.Number); ok {
		if m, _ := min.Int64(); n < m {
			return fmt.Errorf("%w: input %q needs at least %d characters", ErrClientValidation, r.blockID, m)
		}
	}
	if max, ok := r.el["max_length"].(json.Number); ok {
		if m, _ := max.Int64(); n > m {
			return fmt.Errorf("%w: input %q allows at most %d characters", ErrClientValidation, r.blockID, m)
		}
	}
	return nil
}

// SubmitView submits an open modal as user, shaped like
// payloads/view_submission.json: values maps input block_ids to the text typed
// (plain_text_input) or the option texts picked (checkboxes, selects, radios).
// Inputs not in values keep their initial values. It fails with
// ErrClientValidation where Slack's client would not submit (a required input
// empty, text outside min/max length). The app's answer is applied like Slack
// does: an empty 200 closes the view; response_action errors/update/push/clear
// show errors, replace, push or close the stack. An answer Slack would reject
// (invalid view, errors for a block that is not an input) gives
// ErrBadViewResponse, with the Response.
func (s *Server) SubmitView(ctx context.Context, user User, viewID string, values map[string][]string, d Delivery) (Response, error) {
	view, err := s.openView(user, viewID)
	if err != nil {
		return Response{}, err
	}
	blocks, _ := view["blocks"].([]any)
	state, err := submitState(blocks, values)
	if err != nil {
		return Response{}, err
	}
	view["state"] = map[string]any{"values": state}
	s.mu.Lock()
	o, err := s.viewOriginLocked(s.views[viewID], user)
	if err != nil {
		s.mu.Unlock()
		return Response{}, err
	}
	trig := s.issueTriggerForLocked(o.team.ID, user.ID, viewID)
	payload := map[string]any{
		"type":                  "view_submission",
		"team":                  o.teamJSON(),
		"user":                  s.payloadUser(user),
		"api_app_id":            s.opts.AppID,
		"token":                 s.opts.VerificationToken,
		"trigger_id":            trig,
		"view":                  view,
		"response_urls":         []any{},
		"is_enterprise_install": o.in.OrgWide,
		"enterprise":            s.enterpriseJSON(o.team),
	}
	s.mu.Unlock()
	resp, err := s.Deliver(ctx, payload, d)
	if err != nil {
		return resp, err
	}
	return resp, s.applySubmitResponse(viewID, user.ID, blocks, resp)
}

func (s *Server) applySubmitResponse(viewID, userID string, blocks []any, resp Response) error {
	if resp.Status != 200 {
		return nil // Slack shows the user an error; the view stays as it is
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.views[viewID]
	if v.Closed {
		return nil // closed meanwhile, e.g. by a views.update race; nothing to apply
	}
	body := bytes.TrimSpace(resp.Body)
	if len(body) == 0 {
		v.Closed = true
		s.notifyLocked()
		return nil
	}
	var r submitAnswer
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%w: answer is not JSON: %v", ErrBadViewResponse, err)
	}
	if err := s.applyActionLocked(v, userID, blocks, r); err != nil {
		return err
	}
	s.notifyLocked()
	return nil
}

// submitAnswer is an app's answer to a view_submission.
type submitAnswer struct {
	ResponseAction string            `json:"response_action"`
	Errors         map[string]string `json:"errors"`
	View           json.RawMessage   `json:"view"`
}

// newView checks and decodes the view a response_action update/push sends.
func (r submitAnswer) newView() (map[string]any, error) {
	if err := blockcheck.View(r.View); err != nil {
		return nil, fmt.Errorf("%w: response_action %s: %v", ErrBadViewResponse, r.ResponseAction, err)
	}
	j, _ := decodeJSON(r.View)
	vm := obj(j)
	b, _ := vm["blocks"].([]any)
	normalizeBlocks(b)
	return vm, nil
}

// applyActionLocked applies a response_action to the submitted view v.
func (s *Server) applyActionLocked(v *View, userID string, blocks []any, r submitAnswer) error {
	switch r.ResponseAction {
	case "":
		v.Closed = true
	case "errors":
		return applyErrors(v, blocks, r.Errors)
	case "update":
		vm, err := r.newView()
		if err != nil {
			return err
		}
		s.updateViewLocked(v, vm)
	case "push":
		vm, err := r.newView()
		if err != nil {
			return err
		}
		if _, e := s.pushLocked(vm, "", userID, v); e != "" {
			return fmt.Errorf("%w: %s", ErrBadViewResponse, e)
		}
	case "clear":
		for _, sv := range s.stackLocked(v.RootID) {
			sv.Closed = true
		}
	default:
		return fmt.Errorf("%w: unknown response_action %q", ErrBadViewResponse, r.ResponseAction)
	}
	return nil
}

// applyErrors shows field errors, which Slack accepts only for the view's
// input blocks.
func applyErrors(v *View, blocks []any, errs map[string]string) error {
	inputs := map[string]bool{}
	for _, b := range blocks {
		if str(obj(b), "type") == "input" {
			inputs[str(obj(b), "block_id")] = true
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("%w: response_action errors without errors", ErrBadViewResponse)
	}
	for k := range errs {
		if !inputs[k] {
			return fmt.Errorf("%w: errors key %q is not an input block_id of the view", ErrBadViewResponse, k)
		}
	}
	v.Errors = errs
	return nil
}

// CloseView closes an open modal as user (the Cancel/×). With clear_on_close
// the whole stack closes. A view_closed payload (payloads/view_closed.json) is
// delivered only if the view has notify_on_close; otherwise CloseView returns
// a zero Response and nothing is sent, as on Slack.
func (s *Server) CloseView(ctx context.Context, user User, viewID string, d Delivery) (Response, error) {
	view, err := s.openView(user, viewID)
	if err != nil {
		return Response{}, err
	}
	notify, _ := view["notify_on_close"].(bool)
	clear, _ := view["clear_on_close"].(bool)
	blocks, _ := view["blocks"].([]any)
	view["state"] = map[string]any{"values": stateValues(blocks, nil)}

	s.mu.Lock()
	v := s.views[viewID]
	o, err := s.viewOriginLocked(v, user)
	if err != nil {
		s.mu.Unlock()
		return Response{}, err
	}
	closing := []*View{v}
	if clear {
		closing = s.stackLocked(v.RootID)
	}
	for _, cv := range closing {
		cv.Closed = true
	}
	s.notifyLocked()
	payload := map[string]any{
		"type":                  "view_closed",
		"team":                  o.teamJSON(),
		"user":                  s.payloadUser(user),
		"api_app_id":            s.opts.AppID,
		"token":                 s.opts.VerificationToken,
		"view":                  view,
		"is_cleared":            clear,
		"is_enterprise_install": o.in.OrgWide,
		"enterprise":            s.enterpriseJSON(o.team),
	}
	s.mu.Unlock()
	if !notify {
		return Response{}, nil
	}
	return s.Deliver(ctx, payload, d)
}

// OpenViews returns the views currently open for a user, oldest first.
func (s *Server) OpenViews(userID string) []View {
	var out []View
	for _, v := range s.Views() {
		if !v.Closed && v.UserID == userID {
			out = append(out, v)
		}
	}
	return slices.Clip(out)
}
