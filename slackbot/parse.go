package slackbot

import (
	"encoding/json"
	"errors"
	"net/url"

	"github.com/slack-go/slack"
)

// parseInteraction decodes the form body of an HTTP interaction delivery
// (payload=<JSON>) into the fields the dispatcher reads. slack-go's
// InteractionCallbackParse decodes every field, the whole message with
// all its blocks, and the actions twice: on a click that was most of the
// CPU of acknowledging it. This decodes only what is used; the JSON
// decoder skips the rest (message and view blocks included) without
// building anything. Socket Mode deliveries arrive parsed by slack-go.
func parseInteraction(body []byte) (slack.InteractionCallback, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return slack.InteractionCallback{}, err
	}
	payload := form.Get("payload")
	if payload == "" {
		return slack.InteractionCallback{}, errors.New("slackbot: no payload in interaction")
	}
	var p leanInteraction
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		return slack.InteractionCallback{}, err
	}
	return p.callback(), nil
}

// leanInteraction is the part of an interaction payload the dispatcher
// uses (see shared/reference/payloads for whole ones).
type leanInteraction struct {
	Type        slack.InteractionType `json:"type"`
	Token       string                `json:"token"`
	TriggerID   string                `json:"trigger_id"`
	ResponseURL string                `json:"response_url"`
	APIAppID    string                `json:"api_app_id"`
	Team        slack.Team            `json:"team"`
	User        slack.User            `json:"user"`
	Channel     struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"channel"`
	Container slack.Container `json:"container"`
	Message   struct {
		Timestamp string `json:"ts"`
	} `json:"message"`
	Actions []leanAction             `json:"actions"`
	State   *slack.BlockActionStates `json:"state"`
	View    struct {
		ID              string           `json:"id"`
		Type            slack.ViewType   `json:"type"`
		CallbackID      string           `json:"callback_id"`
		PrivateMetadata string           `json:"private_metadata"`
		Hash            string           `json:"hash"`
		State           *slack.ViewState `json:"state"`
	} `json:"view"`
}

func (p *leanInteraction) callback() slack.InteractionCallback {
	var ic slack.InteractionCallback
	ic.Type, ic.Token, ic.TriggerID, ic.ResponseURL, ic.APIAppID = p.Type, p.Token, p.TriggerID, p.ResponseURL, p.APIAppID
	ic.Team, ic.User, ic.Container = p.Team, p.User, p.Container
	ic.Channel.ID, ic.Channel.Name = p.Channel.ID, p.Channel.Name
	ic.Message.Timestamp = p.Message.Timestamp
	for _, a := range p.Actions {
		if a.BlockAction != nil {
			ic.ActionCallback.BlockActions = append(ic.ActionCallback.BlockActions, a.BlockAction)
		}
	}
	ic.BlockActionState = p.State
	ic.View.ID, ic.View.Type, ic.View.CallbackID = p.View.ID, p.View.Type, p.View.CallbackID
	ic.View.PrivateMetadata, ic.View.Hash, ic.View.State = p.View.PrivateMetadata, p.View.Hash, p.View.State
	return ic
}

// leanAction is one element of "actions": a Block Kit action when it
// carries a string block_id, as slack-go decides, else a legacy
// attachment action the dispatcher ignores (BlockAction nil).
type leanAction struct{ BlockAction *slack.BlockAction }

func (a *leanAction) UnmarshalJSON(b []byte) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if id := probe["block_id"]; len(id) == 0 || id[0] != '"' {
		return nil
	}
	a.BlockAction = new(slack.BlockAction)
	return json.Unmarshal(b, a.BlockAction)
}
