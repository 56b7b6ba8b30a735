// Package installs lets one deployment serve several Slack workspaces: the
// installations "Add to Slack" (OAuth v2) leaves behind, kept in the store
// sealed with AES-GCM (seal.go, keeper.go); the install and redirect routes
// (flow.go); which token a Slack call goes out with (transport.go: every
// call carries its workspace in its context, package workspace, and a call
// that names none is refused, so nothing is ever posted with another
// workspace's token); the refresh of rotating tokens under a lease one
// replica holds (refresh.go). It links neither slack-go nor go-redis: what
// it asks of Slack goes through Slack, which the Slack side implements.
//
// With SLACK_BOT_TOKEN set the deployment serves its one workspace as
// before and nothing here runs.
package installs

import "github.com/askslack/askslack/workspace"

// The workspace package's names, as installs' callers read them.
type (
	Installation = workspace.Installation
	Grant        = workspace.Grant
)

var (
	ErrNotInstalled = workspace.ErrNotInstalled
	ErrNoWorkspace  = workspace.ErrNoWorkspace
)
