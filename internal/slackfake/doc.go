// Package slackfake is a fake Slack, and a product part: it ships in the
// binary behind `askslack try` (the playground) and `askslack bench`, and
// it is the fake every end-to-end test drives the bot through: the Web API
// methods the bot calls, a sender of interaction payloads (button clicks,
// checkbox ticks, selects, modal submissions and closes) over signed HTTP or
// Socket Mode, and a Socket Mode
// WebSocket endpoint. It owns nothing of the bot; it is shaped on Slack's
// documented behaviour and on real payloads (testdata/, from Slack's docs), not on what
// the bot sends.
//
// # Web API
//
// Start a Server and point a client at APIURL ("http://127.0.0.1:PORT/api/",
// for slack.OptionAPIURL or SLACK_API_URL). Methods accept form or JSON bodies
// and the token as Authorization: Bearer or a "token" field:
//
//	auth.test, chat.postMessage, chat.update, chat.postEphemeral, chat.delete,
//	views.open, views.push, views.update, users.info, users.lookupByEmail,
//	usergroups.users.list, conversations.open, conversations.history,
//	apps.connections.open, views.publish, chat.getPermalink, reactions.add,
//	conversations.replies, conversations.info, oauth.v2.access
//
// Blocks are checked with internal/blockcheck: a bad message answers
// {"ok":false,"error":"invalid_blocks","errors":[…]}, a bad view
// {"ok":false,"error":"invalid_arguments",…} (what Slack's views.* answer),
// both with Slack's "[ERROR] … [json-pointer:…]" lines in
// response_metadata.messages. Slack's other rules are kept too: message ts
// values are unique, increasing "1700000000.000100" strings; Slack-generated
// block_id/action_id are filled in where the bot left them out; chat.update
// with text and no blocks removes the blocks; a trigger_id works once, within
// TriggerTTL (3 s) of being issued; unknown methods answer unknown_method.
// FailNext injects errors, HTTP 429 with Retry-After, or HTTP 500 (the call
// has no effect). DelayNext holds the response of a call that already took
// effect; DropNext closes the connection after the effect, so the client
// cannot tell whether it worked; FailAfterNext answers an error such as
// internal_error after the effect, as Slack may ("some aspect of the
// operation succeeded"); all four, and Chaos, take "response_url" as
// a method for posts to a click's response_url. chat.postMessage keeps a message's metadata
// (checked for event_type and event_payload) and conversations.history returns
// it with include_all_metadata=true. Every call
// is recorded (Calls, WaitFor) and the resulting state can be read back
// (Message, Messages, Ephemerals, View, Views).
//
// # Interactions
//
// ClickButton, ClickButtonIn, ClickButtonByAction, Select, ToggleCheckbox,
// SubmitView, CloseView and Deliver build payloads shaped like the samples in
// testdata/ (each with a fresh trigger_id the fake accepts
// in views.open, and a response_url served by the fake) and deliver them:
//
//   - over HTTP: POST to the interaction URL, form field payload=…, signed with
//     X-Slack-Signature / X-Slack-Request-Timestamp (Delivery can leave the
//     signature out, spoil it, make it stale, or mark a retry);
//   - over Socket Mode: an "interactive" envelope to one of the connected
//     clients, waiting for the ack; the ack's payload is the Response body.
//
// Slack gives the app 3 s (AckTimeout) to answer; later answers are errors.
//
// # Events and slash commands
//
// SendEvent wraps any inner event in an event_callback envelope (team_id,
// api_app_id, event_id, event_time, authorizations) and delivers it as a
// signed JSON POST to the events URL (SetEventsURL) or as an "events_api"
// envelope over Socket Mode; redeliver with the same event_id to model
// Slack's retries. SendCommand delivers a slash command as a signed form
// POST to the commands URL (SetCommandsURL) or a "slash_commands" envelope,
// and shows its immediate response as Slack does. Mention and HomeOpened
// build the app_mention and app_home_opened events; views.publish stores a
// Home tab per user (Home), checked with blockcheck.Home; ClickHome,
// SelectHome and ToggleHomeCheckbox act in it, and send what Slack sends
// from a Home tab: the selection in view.state.values, no top-level state,
// no message, no channel, no response_url.
//
// # Sign in with Slack
//
// With Options.OIDCClientID set, the fake is Slack's OpenID Connect provider
// (https://docs.slack.dev/authentication/sign-in-with-slack) on Slack's
// paths: GET /openid/connect/authorize (a page listing the users, each a
// link a[data-user="U…"] adding fake_user=U…, which redirects to the app
// with code and state), openid.connect.token and openid.connect.userInfo
// under /api/, the JWKS at /openid/connect/keys and
// /.well-known/openid-configuration. id_tokens are RS256 JWTs signed with a
// key made on first use; SignIDToken signs any claims with it.
//
// # Several workspaces, OAuth v2, token rotation, uninstall
//
// Options.Teams, ChannelTeams and SharedChannels model several workspaces,
// an Enterprise Grid organization (Team.EnterpriseID; a Grid user's id is
// org-wide, User.Teams) and Slack Connect channels. Install registers an
// installation (or OAuth v2 does: GET /oauth/v2/authorize, a page of
// a[data-team], a[data-enterprise] and a[data-cancel] links, and
// oauth.v2.access, https://docs.slack.dev/authentication/installing-with-oauth);
// an org-wide one serves the workspaces AddToWorkspace added it to. Every
// call's token resolves to its installation (Call.Team, Call.Token) and
// reaches only its workspaces' channels and people (channel_not_found,
// user_not_found); an unknown, revoked or expired token answers
// invalid_auth, token_revoked or token_expired. Payloads, events and slash
// commands name the workspace and the serving installation (team,
// enterprise, is_enterprise_install, authorizations). With
// Options.TokenRotation tokens expire and refresh as
// https://docs.slack.dev/authentication/using-token-rotation says
// (ExpireTokens, Refreshes); Uninstall and RevokeTokens send tokens_revoked
// and app_uninstalled. None of it is on until used: one workspace, as
// Options.TeamID and BotToken say.
//
// # Standalone
//
// cmd/fakeslack runs the fake on a fixed address and adds nothing but flags.
// The control API on the same server drives it by hand:
//
//	GET  /_fake/messages                 stored messages (JSON)
//	GET  /_fake/ephemerals               ephemeral messages
//	GET  /_fake/views                    views, open and closed
//	GET  /_fake/calls?method=chat.update recorded Web API calls
//	POST /_fake/click   {"channel","ts","user","button"}            click a button (or "action_id","value")
//	POST /_fake/select  {"channel","ts","user","action_id","options":[…]}
//	POST /_fake/submit  {"view_id","user","values":{"block_id":["text"]}}
//	POST /_fake/close   {"view_id","user"}
//	POST /_fake/trigger {"user"}                                     a fresh trigger_id
//	POST /_fake/disconnect {"reason"}                                Socket Mode disconnect frame
//	GET  /_fake/installations                                        installations (no tokens)
//	POST /_fake/uninstall {"team"}  (also /_fake/revoke, /_fake/expire)
//
// The POSTs answer {"transport","status","body","error"}: the app's answer to
// the delivery. "transport" may be set to "http" or "socket" in the request.
package slackfake
