package slackbot

import (
	"github.com/slack-go/slack"
)

// userName is how Slack names the person in a payload.
func userName(u slack.User) string {
	if u.Name != "" {
		return u.Name
	}
	return u.Profile.DisplayName
}
