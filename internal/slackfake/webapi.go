package slackfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/askslack/askslack/internal/blockcheck"
)

// reply is a Web API answer.
type reply struct {
	status     int
	retryAfter int
	body       map[string]any
}

func ok(kv ...any) reply {
	body := map[string]any{"ok": true}
	for i := 0; i+1 < len(kv); i += 2 {
		body[kv[i].(string)] = kv[i+1]
	}
	return reply{status: http.StatusOK, body: body}
}

func fail(err string) reply {
	return reply{status: http.StatusOK, body: map[string]any{"ok": false, "error": err}}
}

// blocksFail turns a blockcheck error into Slack's answer: no_text, or
// invalid_blocks (chat.*) / invalid_arguments (views.*) with the problems in
// "errors" and in response_metadata.messages as "[ERROR] …".
func blocksFail(code string, err error) reply {
	if errors.Is(err, blockcheck.ErrNoText) {
		return fail("no_text")
	}
	var ps *blockcheck.Problems
	var list []string
	if errors.As(err, &ps) {
		list = ps.Strings()
	} else {
		list = []string{err.Error()}
	}
	msgs := make([]string, len(list))
	for i, e := range list {
		msgs[i] = "[ERROR] " + e
	}
	r := fail(code)
	r.body["errors"] = list
	r.body["response_metadata"] = map[string]any{"messages": msgs}
	return r
}

type apiHandler func(s *Server, p map[string]string) reply

var apiMethods = map[string]apiHandler{
	"auth.test":             (*Server).authTest,
	"chat.postMessage":      (*Server).chatPostMessage,
	"chat.update":           (*Server).chatUpdate,
	"chat.postEphemeral":    (*Server).chatPostEphemeral,
	"chat.delete":           (*Server).chatDelete,
	"views.open":            (*Server).viewsOpen,
	"views.push":            (*Server).viewsPush,
	"views.update":          (*Server).viewsUpdate,
	"users.info":            (*Server).usersInfo,
	"users.lookupByEmail":   (*Server).usersLookupByEmail,
	"usergroups.users.list": (*Server).usergroupsUsersList,
	"conversations.open":    (*Server).conversationsOpen,
	"conversations.history": (*Server).conversationsHistory,
	"apps.connections.open": (*Server).appsConnectionsOpen,
}

func (s *Server) handleAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	body, _ := io.ReadAll(r.Body)
	params, token := parseParams(r, body)

	if h := s.takeHold(method); h != nil && !s.held(r, h) {
		return
	}
	s.serve(w, r, method, params, body, func() reply { return s.dispatchLocked(method, params, token) })
}

// serve runs one call (Web API method or response_url) under the lock —
// chaos first, then do — records it, and answers it with the faults set
// for method (a delay, a dropped response).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, method string, params map[string]string, body []byte, do func() reply) {
	s.mu.Lock()
	chaosFail, chaosDelay, chaosFailAfter := s.chaosLocked(method)
	var rep reply
	if chaosFail {
		rep = fail("internal_error")
		rep.status = http.StatusInternalServerError
	} else {
		s.callTeam, s.callToken = "", ""
		rep = do()
	}
	resp := marshal(rep.body)
	s.calls = append(s.calls, Call{Method: method, Params: params, Body: body, Status: rep.status, Response: resp, At: s.opts.Now(),
		Team: s.callTeam, Token: s.callToken})
	s.callTeam, s.callToken = "", ""
	flt := s.takeFaultLocked(method)
	flt.delay += chaosDelay
	if chaosFailAfter && flt.fail == nil {
		flt.fail = &failure{err: "internal_error"}
	}
	s.notifyLocked()
	s.mu.Unlock()

	s.logf("slackfake: %s → %d %s", method, rep.status, resp)
	if h := flt.reply; h != nil {
		if !s.held(r, h) {
			return
		}
		flt.drop = flt.drop || h.lost
		if h.fail != nil {
			flt.fail = h.fail
		}
	}
	if flt.delay > 0 {
		select {
		case <-time.After(flt.delay):
		case <-r.Context().Done():
			return
		}
	}
	if flt.drop {
		// The call took effect; the client never learns it.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if f := flt.fail; f != nil {
		// The call took effect; the client is told it failed.
		rep = failureReply(*f)
		resp = marshal(rep.body)
		s.logf("slackfake: %s answered %d %s after taking effect", method, rep.status, resp)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if rep.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(rep.retryAfter))
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(resp)
}

func (s *Server) dispatchLocked(method string, p map[string]string, token string) reply {
	h, known := apiMethods[method]
	if !known {
		return fail("unknown_method")
	}
	s.callToken = token
	if rep, stopped := s.faultedLocked(method, p); stopped {
		return rep
	}
	in, e := s.authErrorLocked(method, token)
	if e != "" {
		return fail(e)
	}
	if in != nil {
		s.callTeam = in.key()
	}
	if rep, missing := s.scopeErrorLocked(method, p); missing {
		return rep
	}
	s.caller = in
	defer func() { s.caller = nil }()
	return h(s, p)
}

// faultedLocked is what a call gets instead of its effect: a failure a
// test injected (FailNext), else Slack's rate limit; false when neither.
func (s *Server) faultedLocked(method string, p map[string]string) (reply, bool) {
	if rep, failed := s.injectedFailureLocked(method); failed {
		return rep, true
	}
	return s.rateLimitedLocked(method, p)
}

func (s *Server) injectedFailureLocked(method string) (reply, bool) {
	q := s.failures[method]
	if len(q) == 0 {
		return reply{}, false
	}
	f := q[0]
	s.failures[method] = q[1:]
	return failureReply(f), true
}

// failureReply is Slack's answer for an injected failure: "ratelimited"
// is HTTP 429 with Retry-After, "internal_error" HTTP 500, anything else
// {"ok":false,"error":…} with 200 — unless the failure names its status.
func failureReply(f failure) reply {
	rep := fail(f.err)
	switch f.err {
	case "ratelimited":
		rep.status = http.StatusTooManyRequests
		rep.retryAfter = f.retryAfter
	case "internal_error":
		rep.status = http.StatusInternalServerError
	}
	if f.status != 0 {
		rep.status = f.status
	}
	return rep
}

func (s *Server) isAppToken(tok string) bool {
	if s.opts.AppToken != "" {
		return tok == s.opts.AppToken
	}
	return strings.HasPrefix(tok, "xapp-")
}

// authErrorLocked checks a call's token: the app-level token for
// apps.connections.open, a bot token (resolved to its installation,
// teams.go) for everything else.
func (s *Server) authErrorLocked(method, tok string) (*install, string) {
	if tok == "" {
		return nil, "not_authed"
	}
	if method == "apps.connections.open" {
		if s.isAppToken(tok) {
			return nil, ""
		}
		if _, e := s.resolveLocked(tok); e == "" || e == "token_expired" || e == "token_revoked" {
			return nil, "not_allowed_token_type"
		}
		return nil, "invalid_auth"
	}
	if s.isAppToken(tok) {
		return nil, "not_allowed_token_type"
	}
	return s.resolveLocked(tok)
}

// parseParams reads form fields (body and query) or a JSON object body into
// flat strings, and the token from Authorization: Bearer or the "token" field.
func parseParams(r *http.Request, body []byte) (map[string]string, string) {
	p := map[string]string{}
	for k, v := range r.URL.Query() {
		p[k] = v[0]
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) == nil {
			for k, raw := range m {
				var s string
				if json.Unmarshal(raw, &s) == nil {
					p[k] = s
				} else {
					p[k] = string(raw)
				}
			}
		}
	} else if vals, err := url.ParseQuery(string(body)); err == nil {
		for k, v := range vals {
			p[k] = v[0]
		}
	}
	tok := p["token"]
	delete(p, "token")
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		tok = strings.TrimPrefix(h, "Bearer ")
	}
	return p, tok
}

// authTest says who the token is: its workspace, bot user and bot, and,
// in an Enterprise Grid organization, the enterprise_id
// (https://docs.slack.dev/reference/methods/auth.test: "When working
// against a team within an Enterprise organization, you'll also find
// their enterprise_id here"). An org-wide token names the organization.
func (s *Server) authTest(map[string]string) reply {
	in := s.callerLocked()
	if in == s.ws.implicit && !s.multiLocked() {
		return ok("url", "https://"+s.opts.TeamDomain+".slack.com/", "team", s.opts.TeamDomain,
			"user", "askslack", "team_id", s.opts.TeamID, "user_id", s.opts.BotUserID,
			"bot_id", s.opts.BotID, "is_enterprise_install", false)
	}
	var team Team
	if in.OrgWide {
		name := s.enterpriseNameLocked(in.EnterpriseID)
		team = Team{ID: in.EnterpriseID, Domain: strings.ToLower(in.EnterpriseID), Name: name}
		if name == "" {
			team.Name = team.Domain
		}
	} else {
		team = s.teamLocked(in.TeamID)
	}
	rep := ok("url", "https://"+team.Domain+".slack.com/", "team", team.Name,
		"user", "askslack", "team_id", team.ID, "user_id", in.BotUserID,
		"bot_id", in.BotID, "app_id", in.AppID, "is_enterprise_install", in.OrgWide)
	if in.EnterpriseID != "" {
		rep.body["enterprise_id"] = in.EnterpriseID
	}
	if !in.ExpiresAt.IsZero() {
		if left := int(in.ExpiresAt.Sub(s.opts.Now()).Seconds()); left > 0 {
			rep.body["expires_in"] = left
		}
	}
	return rep
}

// channelExistsLocked reports whether a conversation id exists.
func (s *Server) channelExistsLocked(id string) bool {
	if !s.channelKnownLocked(id) {
		return false
	}
	// A channel of another workspace is not found with this token (an
	// org-wide token: a workspace the app was not added to).
	return s.reachesChannelLocked(s.caller, id)
}

// channelKnownLocked reports whether a conversation exists at all.
func (s *Server) channelKnownLocked(id string) bool {
	if slices.Contains(s.opts.Channels, id) {
		return true
	}
	if _, owned := s.opts.ChannelTeams[id]; owned {
		return true
	}
	if _, shared := s.opts.SharedChannels[id]; shared {
		return true
	}
	for _, dm := range s.dms {
		if dm == id {
			return true
		}
	}
	if len(s.opts.Channels) > 0 || len(id) < 2 {
		return false
	}
	switch id[0] {
	case 'C', 'D', 'G':
		return true
	}
	return false
}

// dmLocked returns the bot's DM channel with a user, opening it if
// needed: each installation's bot has its own DMs.
func (s *Server) dmLocked(userID string) (id string, alreadyOpen bool) {
	in := s.callerLocked()
	key := userID
	if in != s.ws.implicit {
		key = in.key() + "/" + userID
	}
	if id, ok := s.dms[key]; ok {
		return id, true
	}
	if in == s.ws.implicit {
		id = "D" + strings.TrimLeft(userID, "UW")
	} else {
		id = s.newIDLocked("D")
		s.dmInstalls[id] = in.key()
		s.dmTeams[id] = s.dmTeamLocked(in, userID)
	}
	s.dms[key] = id
	return id, false
}

// dmTeamLocked is the workspace a DM of an installation with a user is in:
// one of the user's the installation serves, else its own.
func (s *Server) dmTeamLocked(in *install, userID string) string {
	if u, ok := s.user(userID); ok {
		for _, t := range userTeams(u) {
			if slices.Contains(in.servedTeams(), t) {
				return t
			}
		}
	}
	return s.actingTeamLocked(in, "")
}

// postChannelLocked resolves the channel argument of a post: a user id posts
// to the bot's DM with that user, as on Slack.
func (s *Server) postChannelLocked(ch string) (string, string) {
	if strings.HasPrefix(ch, "U") || strings.HasPrefix(ch, "W") {
		if u, ok := s.user(ch); !ok || !s.reachesUserLocked(s.caller, u) {
			return "", "channel_not_found"
		}
		id, _ := s.dmLocked(ch)
		return id, ""
	}
	if !s.channelExistsLocked(ch) {
		return "", "channel_not_found"
	}
	return ch, ""
}

func (s *Server) messageJSON(m *Message) map[string]any {
	team := m.team
	if team == "" {
		team = s.opts.TeamID
	}
	j := map[string]any{"type": "message", "text": m.Text, "user": m.User, "ts": m.TS, "team": team}
	if m.botID != "" {
		j["bot_id"] = m.botID
		j["app_id"] = s.opts.AppID
	} else if m.User == s.opts.BotUserID {
		j["bot_id"] = s.opts.BotID
		j["app_id"] = s.opts.AppID
	}
	if len(m.Blocks) > 0 {
		j["blocks"] = json.RawMessage(m.Blocks)
	}
	if m.ThreadTS != "" {
		j["thread_ts"] = m.ThreadTS
	}
	if m.Broadcast {
		j["subtype"] = "thread_broadcast"
	}
	return j
}

// conversationsHistory lists a channel's top-level messages (and thread
// replies also sent to the channel; a thread's parent with its thread_ts
// and reply_count) newest first,
// from oldest (exclusive unless inclusive is set, as on Slack) up; with
// include_all_metadata each carries its metadata. Pages of up to limit
// (default 100) messages follow response_metadata.next_cursor.
func (s *Server) conversationsHistory(p map[string]string) reply {
	ch := p["channel"]
	if !s.channelExistsLocked(ch) {
		return fail("channel_not_found")
	}
	oldest := p["oldest"]
	limit, err := strconv.Atoi(p["limit"])
	if err != nil || limit <= 0 || limit > 999 {
		limit = 100
	}
	var ms []*Message
	for _, m := range s.messages {
		if m.Channel == ch && (m.ThreadTS == "" || m.Broadcast) && (oldest == "" || tsAfter(m.TS, oldest) || (truthy(p["inclusive"]) && m.TS == oldest)) {
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool { return tsAfter(ms[i].TS, ms[j].TS) })
	if c := p["cursor"]; c != "" {
		// The cursor is the ts of the last message of the previous page.
		i := sort.Search(len(ms), func(i int) bool { return !tsAfter(ms[i].TS, c) || ms[i].TS == c })
		for i < len(ms) && ms[i].TS == c {
			i++
		}
		ms = ms[i:]
	}
	// A thread's parent carries its thread_ts and reply_count, as on Slack.
	replies := map[string]int{}
	for _, m := range s.messages {
		if m.Channel == ch && m.ThreadTS != "" && m.ThreadTS != m.TS {
			replies[m.ThreadTS]++
		}
	}
	return s.messagePage(ms, limit, truthy(p["include_all_metadata"]), func(m *Message, j map[string]any) {
		if n := replies[m.TS]; n > 0 && m.ThreadTS == "" {
			j["thread_ts"], j["reply_count"] = m.TS, n
		}
	})
}

// messagePage answers a listing of ms in pages of limit: the messages (with
// their metadata when asked; decorate adds fields), has_more and the
// cursor, which is the ts of the page's last message.
func (s *Server) messagePage(ms []*Message, limit int, metadata bool, decorate func(*Message, map[string]any)) reply {
	next := ""
	if len(ms) > limit {
		ms = ms[:limit]
		next = ms[limit-1].TS
	}
	out := make([]map[string]any, 0, len(ms))
	for _, m := range ms {
		j := s.messageJSON(m)
		if metadata && len(m.Metadata) > 0 {
			j["metadata"] = m.Metadata
		}
		if decorate != nil {
			decorate(m, j)
		}
		out = append(out, j)
	}
	return ok("messages", out, "has_more", next != "", "response_metadata", map[string]any{"next_cursor": next})
}

// truthy reads a boolean argument as Slack does ("1" or "true").
func truthy(v string) bool { return v == "1" || v == "true" }

// tsAfter compares Slack timestamps ("seconds.micros") numerically.
func tsAfter(a, b string) bool {
	x, _ := strconv.ParseFloat(a, 64)
	y, _ := strconv.ParseFloat(b, 64)
	return x > y
}

func (s *Server) chatPostMessage(p map[string]string) reply {
	ch, e := s.postChannelLocked(p["channel"])
	if e != "" {
		return fail(e)
	}
	if !s.botMayPostLocked(ch) {
		return fail("not_in_channel")
	}
	text, blocks := p["text"], p["blocks"]
	if err := blockcheck.Message(text, json.RawMessage(blocks)); err != nil && !(errors.Is(err, blockcheck.ErrNoText) && p["attachments"] != "") {
		return blocksFail("invalid_blocks", err)
	}
	m := s.botMessageLocked(s.callerLocked(), ch, text, blocks)
	if md := p["metadata"]; md != "" {
		var v struct {
			EventType    string         `json:"event_type"`
			EventPayload map[string]any `json:"event_payload"`
		}
		if err := json.Unmarshal([]byte(md), &v); err != nil || v.EventType == "" || v.EventPayload == nil {
			return fail("invalid_metadata_format")
		}
		m.Metadata = json.RawMessage(md)
	}
	if t := p["thread_ts"]; t != "" {
		// Slack posts a reply to a missing parent as a top-level message.
		if _, ok := s.messages[msgKey{ch, t}]; ok {
			m.ThreadTS = t
			m.Broadcast = truthy(p["reply_broadcast"])
		}
	}
	s.storeMessageLocked(m)
	return ok("channel", ch, "ts", m.TS, "message", s.messageJSON(m))
}

// findOwnMessageLocked finds a message the bot may change.
func (s *Server) findOwnMessageLocked(p map[string]string, notOwn string) (*Message, string) {
	ch := p["channel"]
	if ch == "" || strings.HasPrefix(ch, "U") || strings.HasPrefix(ch, "W") || !s.channelExistsLocked(ch) {
		// chat.update/chat.delete need the conversation id, not a user id.
		return nil, "channel_not_found"
	}
	m, found := s.messages[msgKey{ch, p["ts"]}]
	if !found {
		return nil, "message_not_found"
	}
	if m.User != s.botUserLocked() {
		return nil, notOwn
	}
	return m, ""
}

func (s *Server) chatUpdate(p map[string]string) reply {
	m, e := s.findOwnMessageLocked(p, "cant_update_message")
	if e != "" {
		return fail(e)
	}
	text, hasText := p["text"]
	blocks, hasBlocks := p["blocks"]
	if !hasText && !hasBlocks && p["attachments"] == "" {
		return fail("no_text")
	}
	// Sending text without blocks removes the blocks (slack-platform.md §5.1);
	// omitting text leaves none (we do not keep the old one).
	if err := blockcheck.Message(text, json.RawMessage(blocks)); err != nil && !(errors.Is(err, blockcheck.ErrNoText) && p["attachments"] != "") {
		return blocksFail("invalid_blocks", err)
	}
	m.Text = text
	m.Blocks = normalizeRaw([]byte(blocks))
	m.Updated++
	s.notifyLocked()
	return ok("channel", m.Channel, "ts", m.TS, "text", m.Text, "message", s.messageJSON(m))
}

func (s *Server) chatDelete(p map[string]string) reply {
	m, e := s.findOwnMessageLocked(p, "cant_delete_message")
	if e != "" {
		return fail(e)
	}
	s.deleteMessageLocked(msgKey{m.Channel, m.TS})
	return ok("channel", m.Channel, "ts", m.TS)
}

func (s *Server) chatPostEphemeral(p map[string]string) reply {
	ch, e := s.postChannelLocked(p["channel"])
	if e != "" {
		return fail(e)
	}
	if _, known := s.user(p["user"]); !known || !s.memberLocked(ch, p["user"]) {
		return fail("user_not_in_channel")
	}
	text, blocks := p["text"], p["blocks"]
	if err := blockcheck.Message(text, json.RawMessage(blocks)); err != nil {
		return blocksFail("invalid_blocks", err)
	}
	ts := s.nextTSLocked()
	eph := Ephemeral{Channel: ch, User: p["user"], Text: text, Blocks: normalizeRaw([]byte(blocks)), TS: ts}
	if t := p["thread_ts"]; t != "" {
		// Shown in the thread; for a thread_ts naming no message the fake
		// shows it at the top level, as chat.postMessage posts such a reply.
		if _, ok := s.messages[msgKey{ch, t}]; ok {
			eph.ThreadTS = t
		}
	}
	s.ephemerals = append(s.ephemerals, eph)
	s.notifyLocked()
	return ok("message_ts", ts)
}

// viewArg validates and normalizes the "view" argument of views.*.
func viewArg(p map[string]string) (map[string]any, reply, bool) {
	raw := p["view"]
	if raw == "" {
		return nil, fail("invalid_arguments"), false
	}
	if err := blockcheck.View(json.RawMessage(raw)); err != nil {
		return nil, blocksFail("invalid_arguments", err), false
	}
	v, _ := decodeJSON([]byte(raw))
	vm := obj(v)
	blocks, _ := vm["blocks"].([]any)
	normalizeBlocks(blocks)
	return vm, reply{}, true
}

// viewJSON is the view object as Slack returns and sends it.
func (s *Server) viewJSON(v *View, req map[string]any) map[string]any {
	j := map[string]any{
		"private_metadata": "", "callback_id": "", "external_id": "",
		"clear_on_close": false, "notify_on_close": false, "close": nil, "submit": nil,
	}
	for k, val := range req {
		j[k] = val
	}
	j["id"] = v.ID
	j["team_id"] = v.teamID(s.opts.TeamID)
	j["state"] = map[string]any{"values": map[string]any{}}
	j["hash"] = v.Hash
	j["root_view_id"] = v.RootID
	j["previous_view_id"] = nil
	if v.PreviousID != "" {
		j["previous_view_id"] = v.PreviousID
	}
	j["app_id"] = s.opts.AppID
	j["app_installed_team_id"] = s.opts.TeamID
	j["bot_id"] = s.opts.BotID
	if in := s.ws.installs[v.inst]; in != nil && v.inst != "" {
		j["app_installed_team_id"] = in.installedTeam()
		j["bot_id"] = in.BotID
	}
	return j
}

func (s *Server) newHashLocked() string {
	return fmt.Sprintf("%d.%s", s.opts.Now().Unix(), randAlnum(8))
}

// openViewLocked stores a new view on top of prev's stack (prev nil: a new stack).
func (s *Server) openViewLocked(req map[string]any, triggerID, userID string, prev *View) *View {
	v := &View{ID: s.newIDLocked("V"), Hash: s.newHashLocked(), TriggerID: triggerID, UserID: userID}
	v.RootID = v.ID
	if prev != nil {
		v.RootID, v.PreviousID = prev.RootID, prev.ID
		v.inst, v.team = prev.inst, prev.team
	} else if s.caller != nil && s.multiLocked() {
		v.inst = s.caller.key()
		v.team = s.actingTeamLocked(s.caller, "")
		if t := s.triggers[triggerID]; t != nil && t.team != "" {
			v.team = t.team
		}
	}
	v.JSON = marshal(s.viewJSON(v, req))
	s.views[v.ID] = v
	s.viewOrder = append(s.viewOrder, v.ID)
	s.notifyLocked()
	return v
}

func (s *Server) viewsOpen(p map[string]string) reply {
	req, rep, valid := viewArg(p)
	if !valid {
		return rep
	}
	t, e := s.useTriggerLocked(p["trigger_id"])
	if e != "" {
		return fail(e)
	}
	v := s.openViewLocked(req, p["trigger_id"], t.user, nil)
	return ok("view", json.RawMessage(v.JSON))
}

// stackLocked returns the open views of the stack containing v, bottom first.
func (s *Server) stackLocked(rootID string) []*View {
	var out []*View
	for _, id := range s.viewOrder {
		if v := s.views[id]; v.RootID == rootID && !v.Closed {
			out = append(out, v)
		}
	}
	return out
}

// maxViewStack is Slack's view stack depth; pushing a 4th gives push_limit_reached.
const maxViewStack = 3

func (s *Server) pushLocked(req map[string]any, triggerID, userID string, below *View) (*View, string) {
	stack := s.stackLocked(below.RootID)
	if len(stack) >= maxViewStack {
		return nil, "push_limit_reached"
	}
	return s.openViewLocked(req, triggerID, userID, stack[len(stack)-1]), ""
}

func (s *Server) viewsPush(p map[string]string) reply {
	req, rep, valid := viewArg(p)
	if !valid {
		return rep
	}
	t, e := s.useTriggerLocked(p["trigger_id"])
	if e != "" {
		return fail(e)
	}
	below := s.views[t.viewID]
	if below == nil || below.Closed {
		// A trigger from outside a modal: push onto the user's newest open view.
		below = nil
		for i := len(s.viewOrder) - 1; i >= 0; i-- {
			if v := s.views[s.viewOrder[i]]; v.UserID == t.user && !v.Closed {
				below = v
				break
			}
		}
	}
	if below == nil || !s.ownsViewLocked(below) {
		return fail("not_found")
	}
	v, e := s.pushLocked(req, p["trigger_id"], t.user, below)
	if e != "" {
		return fail(e)
	}
	return ok("view", json.RawMessage(v.JSON))
}

func (s *Server) viewsUpdate(p map[string]string) reply {
	var v *View
	if id := p["view_id"]; id != "" {
		v = s.views[id]
	} else if ext := p["external_id"]; ext != "" {
		for _, id := range s.viewOrder {
			var j struct {
				ExternalID string `json:"external_id"`
			}
			if json.Unmarshal(s.views[id].JSON, &j) == nil && j.ExternalID == ext {
				v = s.views[id]
			}
		}
	} else {
		return fail("invalid_arguments")
	}
	if v == nil || v.Closed || !s.ownsViewLocked(v) {
		return fail("not_found")
	}
	if h := p["hash"]; h != "" && h != v.Hash {
		return fail("hash_conflict")
	}
	req, rep, valid := viewArg(p)
	if !valid {
		return rep
	}
	s.updateViewLocked(v, req)
	return ok("view", json.RawMessage(v.JSON))
}

// ownsViewLocked reports whether the call's installation opened v: another
// installation's token does not find it.
func (s *Server) ownsViewLocked(v *View) bool {
	if !s.multiLocked() || s.caller == nil {
		return true
	}
	k := s.caller.key()
	if s.caller == s.ws.implicit {
		k = ""
	}
	return v.inst == k
}

func (s *Server) updateViewLocked(v *View, req map[string]any) {
	v.Hash = s.newHashLocked()
	v.JSON = marshal(s.viewJSON(v, req))
	v.Updated++
	v.Errors = nil
	s.notifyLocked()
}

func (s *Server) userJSON(u User) map[string]any {
	j := map[string]any{
		"id": u.ID, "team_id": u.TeamID, "name": u.Name, "deleted": false, "real_name": u.Name,
		"tz": "Europe/London", "tz_label": "Greenwich Mean Time", "tz_offset": 0,
		"is_admin": false, "is_owner": false, "is_bot": false, "is_app_user": false,
		"profile": map[string]any{
			"email": u.Email, "real_name": u.Name, "display_name": u.Name,
			"real_name_normalized": u.Name, "display_name_normalized": u.Name,
		},
	}
	if u.EnterpriseID != "" {
		// A Grid user: the organization and every workspace of theirs
		// (https://docs.slack.dev/reference/objects/user-object, enterprise_user).
		j["enterprise_user"] = map[string]any{"id": u.ID, "enterprise_id": u.EnterpriseID,
			"enterprise_name": s.enterpriseNameLocked(u.EnterpriseID), "is_admin": false, "is_owner": false,
			"teams": userTeams(u)}
	}
	return j
}

func (s *Server) usersInfo(p map[string]string) reply {
	id := p["user"]
	if id == s.botUserLocked() || id == s.opts.BotUserID {
		j := s.userJSON(User{ID: id, Name: "askslack", TeamID: s.actingTeamLocked(s.caller, "")})
		j["is_bot"] = true
		return ok("user", j)
	}
	u, found := s.user(id)
	if !found || !s.reachesUserLocked(s.caller, u) {
		return fail("user_not_found")
	}
	return ok("user", s.userJSON(u))
}

func (s *Server) usersLookupByEmail(p map[string]string) reply {
	for _, u := range s.opts.Users {
		if u.Email != "" && strings.EqualFold(u.Email, p["email"]) {
			return ok("user", s.userJSON(s.usersByID[u.ID]))
		}
	}
	return fail("users_not_found")
}

func (s *Server) usergroupsUsersList(p map[string]string) reply {
	ids, found := s.opts.UserGroups[p["usergroup"]]
	if !found {
		return fail("no_such_subteam")
	}
	return ok("users", append([]string{}, ids...))
}

func (s *Server) conversationsOpen(p map[string]string) reply {
	if ch := p["channel"]; ch != "" {
		if !s.channelExistsLocked(ch) {
			return fail("channel_not_found")
		}
		return ok("channel", map[string]any{"id": ch}, "no_op", true, "already_open", true)
	}
	var users []string
	for _, u := range strings.Split(p["users"], ",") {
		if u = strings.TrimSpace(u); u != "" {
			users = append(users, u)
		}
	}
	if len(users) == 0 {
		return fail("users_list_not_supplied")
	}
	for _, u := range users {
		// A user outside the installation's workspaces, with whom it shares
		// no channel, is not found (teams.go).
		if uu, found := s.user(u); !found || !s.reachesUserLocked(s.caller, uu) {
			return fail("user_not_found")
		}
	}
	if len(users) > 8 {
		return fail("too_many_users")
	}
	var id string
	var already bool
	if len(users) == 1 {
		id, already = s.dmLocked(users[0])
	} else {
		slices.Sort(users)
		key := strings.Join(users, ",")
		if in := s.callerLocked(); in != s.ws.implicit {
			key = in.key() + "/" + key
		}
		id, already = s.dms[key]
		if !already {
			id = s.newIDLocked("G")
			s.dms[key] = id
			if in := s.callerLocked(); in != s.ws.implicit {
				s.dmInstalls[id] = in.key()
				s.dmTeams[id] = s.actingTeamLocked(in, "")
			}
			if s.mpims == nil {
				s.mpims = map[string]bool{}
			}
			s.mpims[id] = true
		}
	}
	return ok("channel", map[string]any{"id": id}, "no_op", already, "already_open", already)
}

func (s *Server) appsConnectionsOpen(map[string]string) reply {
	ticket := newUUID()
	s.tickets[ticket] = true
	u := strings.Replace(s.base, "http://", "ws://", 1) + "/link/?ticket=" + ticket + "&app_id=" + s.opts.AppID
	return ok("url", u)
}

// handleResponseURL serves the response_url of block_actions payloads:
// replace_original / delete_original / response_type, like Slack, up to 5
// times within 30 minutes.
func (s *Server) handleResponseURL(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	params, _ := parseParams(r, body)
	s.serve(w, r, "response_url", params, body, func() reply { return s.responseURLLocked(r.URL.Path, body) })
}

// responseURLReq is what an app posts to a response_url.
type responseURLReq struct {
	Text            string          `json:"text"`
	Blocks          json.RawMessage `json:"blocks"`
	ReplaceOriginal flexBool        `json:"replace_original"`
	DeleteOriginal  flexBool        `json:"delete_original"`
	ResponseType    string          `json:"response_type"`
	ThreadTS        string          `json:"thread_ts"`
}

// responseURLLocked checks the response_url (known, at most 5 uses in 30
// minutes) and applies the post to it.
func (s *Server) responseURLLocked(path string, body []byte) reply {
	if rep, failed := s.injectedFailureLocked("response_url"); failed {
		return rep
	}
	ru, found := s.responseURLs[path]
	if !found {
		return reply{status: http.StatusNotFound, body: map[string]any{"ok": false, "error": "invalid_url"}}
	}
	if ru.uses >= 5 || s.opts.Now().Sub(ru.issued) > 30*time.Minute {
		return reply{status: http.StatusNotFound, body: map[string]any{"ok": false, "error": "expired_url"}}
	}
	var req responseURLReq
	if err := json.Unmarshal(body, &req); err != nil {
		return fail("invalid_payload")
	}
	ru.uses++
	k := msgKey{ru.channel, ru.ts}
	if req.DeleteOriginal {
		if _, found := s.messages[k]; found {
			s.deleteMessageLocked(k)
		}
		return ok()
	}
	blocks := bytes.TrimSpace(req.Blocks)
	if string(blocks) == "null" {
		blocks = nil
	}
	if err := blockcheck.Message(req.Text, json.RawMessage(blocks)); err != nil {
		return blocksFail("invalid_blocks", err)
	}
	return s.respondLocked(ru, k, req, blocks)
}

// respondLocked replaces the original message, posts in the channel, or
// (the default) shows the clicker an ephemeral.
func (s *Server) respondLocked(ru *responseURL, k msgKey, req responseURLReq, blocks []byte) reply {
	switch {
	case bool(req.ReplaceOriginal):
		m, found := s.messages[k]
		if !found {
			return fail("message_not_found")
		}
		m.Text, m.Blocks = req.Text, normalizeRaw(blocks)
		m.Updated++
		s.notifyLocked()
	case req.ResponseType == "in_channel":
		m := s.botMessageLocked(s.installByKeyOrImplicitLocked(ru.inst), ru.channel, req.Text, string(blocks))
		if _, found := s.messages[msgKey{ru.channel, req.ThreadTS}]; found {
			m.ThreadTS = req.ThreadTS
		}
		s.storeMessageLocked(m)
	default:
		s.ephemerals = append(s.ephemerals, Ephemeral{Channel: ru.channel, User: ru.user, Text: req.Text, Blocks: normalizeRaw(blocks), TS: s.nextTSLocked()})
		s.notifyLocked()
	}
	return ok()
}

// flexBool accepts true/false and "true"/"false" (some clients send strings).
type flexBool bool

func (b *flexBool) UnmarshalJSON(data []byte) error {
	s := strings.Trim(string(data), `"`)
	*b = flexBool(s == "true")
	return nil
}

// issueResponseURLForLocked issues a response_url of a payload served by
// in (nil: the implicit installation) from workspace team.
func (s *Server) issueResponseURLForLocked(in *install, team, channel, ts, user string) string {
	path := fmt.Sprintf("/actions/%s/%d/%s", team, 1394543744000+s.seq, randAlnum(24))
	s.seq++
	ru := &responseURL{channel: channel, ts: ts, user: user, issued: s.opts.Now()}
	if in != nil && in != s.ws.implicit {
		ru.inst = in.key()
	}
	s.responseURLs[path] = ru
	return s.base + path
}

// installByKeyOrImplicitLocked is the installation named by key, or the
// implicit one for "".
func (s *Server) installByKeyOrImplicitLocked(key string) *install {
	if in := s.ws.installs[key]; in != nil && key != "" {
		return in
	}
	return s.ws.implicit
}

// botMessageLocked is a new message by in's bot in channel ch, naming the
// workspace it was posted from.
func (s *Server) botMessageLocked(in *install, ch, text, blocks string) *Message {
	m := &Message{Channel: ch, TS: s.nextTSLocked(), Text: text, Blocks: normalizeRaw([]byte(blocks)), User: in.BotUserID}
	if in != s.ws.implicit {
		m.inst, m.botID, m.team = in.key(), in.BotID, s.actingTeamLocked(in, ch)
	}
	return m
}

// held says h's call arrived and waits for its release: false when the
// caller or the fake went away first.
func (s *Server) held(r *http.Request, h *Hold) bool {
	close(h.arrived)
	select {
	case <-h.release:
		return true
	case <-r.Context().Done():
		h.gone.Do(func() { close(h.abandoned) })
		return false
	case <-s.stop:
		return false
	}
}
