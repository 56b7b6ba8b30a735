package slackfake

import (
	"slices"
	"strings"
)

// Scopes and channel membership, for the calls whose answer depends on
// them. Off until SetScopes is called: then the fake answers what Slack
// answers an app installed with exactly those bot scopes.

// SetScopes installs the app with these bot scopes (say, the manifest's):
// a call that needs another answers missing_scope, with "needed" and
// "provided", as Slack does. Checked: conversations.history and
// conversations.replies (channels:history, groups:history, im:history or
// mpim:history by the kind of conversation), chat.postMessage and
// chat.postEphemeral (chat:write; chat:write.public to post in a public
// channel the bot is not in).
func (s *Server) SetScopes(scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes = slices.Clone(scopes)
	if s.scopes == nil {
		s.scopes = []string{}
	}
}

// kindLocked is a conversation's kind: "im" (D…), "mpim" (a group DM
// opened with conversations.open), "private" (another G…) or "public".
func (s *Server) kindLocked(channel string) string {
	switch {
	case strings.HasPrefix(channel, "D"):
		return "im"
	case s.mpims[channel]:
		return "mpim"
	case strings.HasPrefix(channel, "G"):
		return "private"
	}
	return "public"
}

// historyScope is the scope reading a conversation of kind needs.
var historyScope = map[string]string{"public": "channels:history", "private": "groups:history", "im": "im:history", "mpim": "mpim:history"}

// scopeErrorLocked is Slack's answer to a call the installed scopes do not
// allow, or ok=false when they do (or scopes are not modelled).
func (s *Server) scopeErrorLocked(method string, p map[string]string) (reply, bool) {
	if s.scopes == nil {
		return reply{}, false
	}
	var needed string
	switch method {
	case "conversations.history", "conversations.replies":
		needed = historyScope[s.kindLocked(p["channel"])]
	case "chat.postMessage", "chat.postEphemeral":
		needed = "chat:write"
	}
	if needed == "" || slices.Contains(s.scopes, needed) {
		return reply{}, false
	}
	r := fail("missing_scope")
	r.body["needed"] = needed
	r.body["provided"] = strings.Join(s.scopes, ",")
	return r, true
}

// RemoveBot takes the bot out of channel (as before anyone invited it):
// chat.postMessage there answers not_in_channel, unless the channel is
// public and the app has chat:write.public. The bot is in every other
// channel.
func (s *Server) RemoveBot(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.botOutside == nil {
		s.botOutside = map[string]bool{}
	}
	s.botOutside[channel] = true
}

// botMayPostLocked reports whether the bot may post in channel.
func (s *Server) botMayPostLocked(channel string) bool {
	if !s.botOutside[channel] {
		return true
	}
	return s.kindLocked(channel) == "public" && slices.Contains(s.scopes, "chat:write.public")
}

// OpenGroupDM opens (or recalls) the group DM of the bot with userIDs, as
// conversations.open with several users does, and returns its id.
func (s *Server) OpenGroupDM(userIDs ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.conversationsOpen(map[string]string{"users": strings.Join(userIDs, ",")})
	ch, _ := r.body["channel"].(map[string]any)
	id, _ := ch["id"].(string)
	return id
}
