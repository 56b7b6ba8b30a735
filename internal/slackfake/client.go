package slackfake

import (
	"context"
	"fmt"
)

// What a person's Slack client shows besides the stored messages (what
// they ticked in a message, their DM with the bot) and clicks it sends
// that the helpers in interact.go cannot name: a button by block, and a
// button inside a modal. The playground (askslack try) is built on these.

// MessageState returns user's client-side state of a stored message: the
// current values of its stateful elements as the next click from it would
// carry them in state.values (blockID → actionID → entry).
func (s *Server) MessageState(channel, ts, userID string) map[string]any {
	m, found := s.Message(channel, ts)
	if !found {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return stateValues(decodeBlocks(m.Blocks), s.userState[stateKey{channel, ts, userID}])
}

// DM returns the id of the bot's direct-message conversation with userID,
// once one was opened (conversations.open, or a post to the user id).
func (s *Server) DM(userID string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, found := s.dms[userID]
	return id, found
}

// ClickBlockButton clicks the button with action_id actionID in block
// blockID of the current version of a stored message (Slack keeps action
// ids unique within a block, so the pair names one button even where
// several blocks hold the same action, as one "Other…" per question does)
// and delivers the block_actions payload.
func (s *Server) ClickBlockButton(ctx context.Context, user User, channel, ts, blockID, actionID string, d Delivery) (Response, error) {
	m, err := s.currentMessage(channel, ts)
	if err != nil {
		return Response{}, err
	}
	return s.click(ctx, m, user, fmt.Sprintf("button %q in block %q", actionID, blockID), func(r elementRef) bool {
		return r.blockID == blockID && str(r.el, "action_id") == actionID
	}, d)
}

// ClickViewButton clicks the button with action_id actionID in block
// blockID of an open modal and delivers the block_actions payload Slack
// sends from a modal: container {type: view, view_id}, the view with its
// state.values (the elements' initial values: the fake keeps no typing),
// a trigger_id that may push onto the view's stack, and no message,
// channel or response_url.
func (s *Server) ClickViewButton(ctx context.Context, user User, viewID, blockID, actionID string, d Delivery) (Response, error) {
	view, err := s.openView(user, viewID)
	if err != nil {
		return Response{}, err
	}
	blocks, _ := view["blocks"].([]any)
	var hit []elementRef
	for _, r := range elements(blocks) {
		if str(r.el, "type") == "button" && r.blockID == blockID && str(r.el, "action_id") == actionID {
			hit = append(hit, r)
		}
	}
	if len(hit) != 1 {
		return Response{}, fmt.Errorf("%w: %d buttons %q in block %q of view %s", ErrNoControl, len(hit), actionID, blockID, viewID)
	}
	b := hit[0]
	action := map[string]any{"action_id": actionID, "block_id": blockID, "text": b.el["text"], "type": "button"}
	if val, has := b.el["value"]; has {
		action["value"] = val
	}
	view["state"] = map[string]any{"values": stateValues(blocks, nil)}
	s.mu.Lock()
	o, err := s.viewOriginLocked(s.views[viewID], user)
	if err != nil {
		s.mu.Unlock()
		return Response{}, err
	}
	action["action_ts"] = s.nextTSLocked()
	payload := map[string]any{
		"type": "block_actions", "user": s.payloadUser(user), "api_app_id": s.opts.AppID,
		"token": s.opts.VerificationToken, "container": map[string]any{"type": "view", "view_id": viewID},
		"trigger_id": s.issueTriggerForLocked(o.team.ID, user.ID, viewID), "team": o.teamJSON(),
		"enterprise": s.enterpriseJSON(o.team), "is_enterprise_install": o.in.OrgWide,
		"view": view, "actions": []any{action},
	}
	s.mu.Unlock()
	return s.Deliver(ctx, payload, d)
}
