package slackbot

import (
	"bytes"
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
func parseInteraction(body []byte) (*slack.InteractionCallback, error) {
	payload, err := formValue(body, "payload")
	if err != nil {
		return nil, err
	}
	if len(payload) == 0 {
		return nil, errors.New("slackbot: no payload in interaction")
	}
	var p leanInteraction
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, err
	}
	return p.callback(), nil
}

// formValue returns the first value of key in a form-encoded body,
// unescaped, or nil. It reads only that pair: url.ParseQuery would copy the
// body to a string, unescape every pair into a map, and the payload would
// be copied once more to decode it — three copies of a message's blocks
// per click.
func formValue(body []byte, key string) ([]byte, error) {
	for len(body) > 0 {
		var pair []byte
		pair, body, _ = bytes.Cut(body, []byte("&"))
		k, v, _ := bytes.Cut(pair, []byte("="))
		name := string(k)
		if bytes.ContainsAny(k, "%+") {
			if name, _ = url.QueryUnescape(name); name == "" {
				continue
			}
		}
		if name == key {
			return unescapeForm(v)
		}
	}
	return nil, nil
}

// unescapeForm decodes a form value: '+' is a space, %XX a byte.
func unescapeForm(v []byte) ([]byte, error) {
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '+':
			out = append(out, ' ')
		case '%':
			if i+2 >= len(v) || unhex(v[i+1]) < 0 || unhex(v[i+2]) < 0 {
				return nil, errors.New("slackbot: invalid escape in interaction payload")
			}
			out = append(out, byte(unhex(v[i+1])<<4|unhex(v[i+2])))
			i += 2
		default:
			out = append(out, c)
		}
	}
	return out, nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// leanInteraction is the part of an interaction payload the dispatcher
// uses (internal/slackfake/testdata holds whole ones).
type leanInteraction struct {
	Type        slack.InteractionType `json:"type"`
	Token       string                `json:"token"`
	TriggerID   string                `json:"trigger_id"`
	ResponseURL string                `json:"response_url"`
	APIAppID    string                `json:"api_app_id"`
	Team        slack.Team            `json:"team"`
	// Enterprise and IsEnterpriseInstall say which installation serves a
	// payload when the deployment serves several workspaces.
	Enterprise          slack.Enterprise `json:"enterprise"`
	IsEnterpriseInstall bool             `json:"is_enterprise_install"`
	User                slack.User       `json:"user"`
	Channel             struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"channel"`
	Container slack.Container `json:"container"`
	Message   struct {
		Timestamp       string              `json:"ts"`
		ThreadTimestamp string              `json:"thread_ts"`
		Metadata        slack.SlackMetadata `json:"metadata"`
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
		// The workspace the app is installed in, where a modal submitted
		// by someone from another organization names theirs in team.
		AppInstalledTeamID string `json:"app_installed_team_id"`
	} `json:"view"`
}

// callback fills a new callback in place: the struct is kilobytes, and the
// dispatcher keeps a pointer anyway.
func (p *leanInteraction) callback() *slack.InteractionCallback {
	ic := new(slack.InteractionCallback)
	ic.Type, ic.Token, ic.TriggerID, ic.ResponseURL, ic.APIAppID = p.Type, p.Token, p.TriggerID, p.ResponseURL, p.APIAppID
	ic.Team, ic.User, ic.Container = p.Team, p.User, p.Container
	ic.Enterprise, ic.IsEnterpriseInstall = p.Enterprise, p.IsEnterpriseInstall
	ic.Channel.ID, ic.Channel.Name = p.Channel.ID, p.Channel.Name
	ic.Message.Timestamp, ic.Message.ThreadTimestamp = p.Message.Timestamp, p.Message.ThreadTimestamp
	ic.Message.Metadata = p.Message.Metadata
	for _, a := range p.Actions {
		if a.BlockAction != nil {
			ic.ActionCallback.BlockActions = append(ic.ActionCallback.BlockActions, a.BlockAction)
		}
	}
	ic.BlockActionState = p.State
	ic.View.ID, ic.View.Type, ic.View.CallbackID = p.View.ID, p.View.Type, p.View.CallbackID
	ic.View.PrivateMetadata, ic.View.Hash, ic.View.State = p.View.PrivateMetadata, p.View.Hash, p.View.State
	ic.View.AppInstalledTeamID = p.View.AppInstalledTeamID
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
