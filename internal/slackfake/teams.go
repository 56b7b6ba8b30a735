package slackfake

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Several workspaces, an Enterprise Grid organization and Slack Connect
// channels, and the installations of the one app in them.
//
// Slack's facts, as the fake keeps them:
//   - An installation is of one workspace, or, for an app installed
//     org-wide on Enterprise Grid, of the organization; an org-wide install
//     serves only the workspaces the org admin added it to
//     (https://docs.slack.dev/enterprise-grid/,
//     https://api.slack.com/enterprise/apps/reference: "the app won't
//     actually be added to any workspaces yet").
//   - A Grid user's id is the organization's: the same W… user may be a
//     member of several of its workspaces (User.Teams).
//   - A channel belongs to one workspace; a Slack Connect channel is
//     shared with workspaces of other organizations, and then is_ext_shared
//     (a channel shared only between workspaces of one organization is
//     is_shared, not is_ext_shared;
//     https://docs.slack.dev/apis/slack-connect).
//
// None of this is checked while the fake is a single workspace (no
// Options.Teams, ChannelTeams or SharedChannels, no Install or OAuth
// install): then every channel and user is reachable with any accepted
// token, as before.

// Team is a workspace known to the fake. EnterpriseID (E…) puts it in an
// Enterprise Grid organization named EnterpriseName.
type Team struct {
	ID, Domain, Name, EnterpriseID, EnterpriseName string
}

// Installation is one install of the app: into a workspace (TeamID), or
// org-wide into an Enterprise Grid organization (OrgWide, EnterpriseID,
// TeamID empty). BotToken and RefreshToken are the current ones (with
// token rotation the access token changes at every refresh); ExpiresAt is
// zero when the token does not expire.
type Installation struct {
	TeamID, EnterpriseID string
	OrgWide              bool
	BotToken             string
	RefreshToken         string
	ExpiresAt            time.Time
	BotUserID            string
	BotID                string
	AppID                string
	Scopes               []string
	Installer            string // the installing user's id
}

// key is how the fake (and its control methods) name an installation: the
// team id, or the enterprise id of an org-wide install.
func (in Installation) key() string {
	if in.OrgWide {
		return in.EnterpriseID
	}
	return in.TeamID
}

// install is the fake's record of an Installation.
type install struct {
	Installation
	workspaces  []string // an org-wide install: the workspaces it was added to
	userToken   string   // authed_user.access_token, when user scopes were granted
	uninstalled bool
	refreshes   int
}

// token is one access or refresh token the fake issued.
type token struct {
	inst    *install
	issued  time.Time
	expires time.Time // zero: never
	revoked bool
	// revokeAt, for a refresh token already used: it stops working then,
	// "after a short grace period" (using-token-rotation).
	revokeAt time.Time
	refresh  bool
	user     bool // a user (xoxp) token
}

// teamState is the Server's workspaces and installations; guarded by Server.mu.
type teamState struct {
	teams    map[string]Team
	order    []string            // team ids, default first
	installs map[string]*install // by key (team or enterprise id)
	instList []*install          // in install order
	tokens   map[string]*token   // access and refresh tokens
	// implicit is the install every accepted token stands for while no
	// installation was registered: the default team, Options' bot ids.
	implicit *install
	codes    map[string]*oauthCode
	seq      int
}

// initTeams sets up the workspaces from opts (New calls it with defaults
// filled in; teamGiven says whether Options.TeamID was set by the caller).
func (s *Server) initTeams(teamGiven bool) {
	ts := &s.ws
	ts.teams = map[string]Team{}
	ts.installs = map[string]*install{}
	ts.tokens = map[string]*token{}
	if len(s.opts.Teams) > 0 && !teamGiven {
		s.opts.TeamID = s.opts.Teams[0].ID
		if s.opts.Teams[0].Domain != "" {
			s.opts.TeamDomain = s.opts.Teams[0].Domain
		}
	}
	add := func(t Team) {
		if t.Domain == "" {
			t.Domain = strings.ToLower(t.ID)
		}
		if t.Name == "" {
			t.Name = t.Domain
		}
		if _, dup := ts.teams[t.ID]; !dup {
			ts.order = append(ts.order, t.ID)
		}
		ts.teams[t.ID] = t
	}
	def := Team{ID: s.opts.TeamID, Domain: s.opts.TeamDomain}
	for _, t := range s.opts.Teams {
		if t.ID == def.ID {
			def = t
		}
	}
	add(def)
	for _, t := range s.opts.Teams {
		add(t)
	}
	// Options.TeamDomain wins for the default team, as before.
	if d := ts.teams[def.ID]; d.Domain != s.opts.TeamDomain {
		d.Domain = s.opts.TeamDomain
		ts.teams[def.ID] = d
	}
	d := ts.teams[s.opts.TeamID]
	ts.implicit = &install{Installation: Installation{
		TeamID: d.ID, EnterpriseID: d.EnterpriseID, BotToken: s.opts.BotToken,
		BotUserID: s.opts.BotUserID, BotID: s.opts.BotID, AppID: s.opts.AppID,
	}}
	if s.opts.BotToken != "" {
		// Options.BotToken is the default team's install, as it always was.
		s.registerLocked(ts.implicit)
		ts.tokens[s.opts.BotToken] = &token{inst: ts.implicit, issued: s.opts.Now()}
	}
}

// multiLocked reports whether the fake models several workspaces: then
// channels, users and payloads are checked and named by workspace.
func (s *Server) multiLocked() bool {
	o := s.opts
	if len(o.Teams) > 0 || len(o.ChannelTeams) > 0 || len(o.SharedChannels) > 0 {
		return true
	}
	for _, in := range s.ws.instList {
		if in != s.ws.implicit {
			return true
		}
	}
	return false
}

// teamLocked returns a workspace by id; an unknown id is a workspace of
// its own (say, the other side of a Slack Connect channel).
func (s *Server) teamLocked(id string) Team {
	if t, ok := s.ws.teams[id]; ok {
		return t
	}
	return Team{ID: id, Domain: strings.ToLower(id), Name: strings.ToLower(id)}
}

// Teams returns the workspaces the fake knows, the default one first.
func (s *Server) Teams() []Team {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Team, 0, len(s.ws.order))
	for _, id := range s.ws.order {
		out = append(out, s.ws.teams[id])
	}
	return out
}

// enterpriseJSON is a payload's "enterprise": {id, name}, or null outside
// Enterprise Grid.
func (s *Server) enterpriseJSON(t Team) any {
	if t.EnterpriseID == "" {
		return nil
	}
	return map[string]any{"id": t.EnterpriseID, "name": t.EnterpriseName}
}

// enterpriseName is the name of an organization, from any of its workspaces.
func (s *Server) enterpriseNameLocked(eid string) string {
	for _, id := range s.ws.order {
		if t := s.ws.teams[id]; t.EnterpriseID == eid && t.EnterpriseName != "" {
			return t.EnterpriseName
		}
	}
	return ""
}

// channelTeamLocked is the workspace that owns a channel: Options.ChannelTeams,
// the team a DM was opened in, else the default team.
func (s *Server) channelTeamLocked(ch string) string {
	if t, ok := s.opts.ChannelTeams[ch]; ok {
		return t
	}
	if t, ok := s.dmTeams[ch]; ok {
		return t
	}
	return s.opts.TeamID
}

// channelTeamsLocked is every workspace in a channel: its owner, then the
// teams sharing it.
func (s *Server) channelTeamsLocked(ch string) []string {
	return append([]string{s.channelTeamLocked(ch)}, s.opts.SharedChannels[ch]...)
}

// extSharedLocked reports whether a channel is shared with another
// organization (Slack Connect): a sharing team outside the owner's
// enterprise, or any other team when the owner is in none.
func (s *Server) extSharedLocked(ch string) bool {
	owner := s.teamLocked(s.channelTeamLocked(ch))
	for _, id := range s.opts.SharedChannels[ch] {
		t := s.teamLocked(id)
		if owner.EnterpriseID == "" || t.EnterpriseID != owner.EnterpriseID {
			return true
		}
	}
	return false
}

// servedTeams is what an installation serves: its team, or the
// workspaces an org-wide install was added to.
func (in *install) servedTeams() []string {
	if in.OrgWide {
		return in.workspaces
	}
	return []string{in.TeamID}
}

// reachesChannelLocked reports whether an installation's token may act in
// a channel: one of its workspaces owns it or shares it. A DM or group DM
// belongs to the installation that opened it.
func (s *Server) reachesChannelLocked(in *install, ch string) bool {
	if in == nil || !s.multiLocked() {
		return true
	}
	if k, ok := s.dmInstalls[ch]; ok {
		return k == in.key()
	}
	for _, t := range s.channelTeamsLocked(ch) {
		if slices.Contains(in.servedTeams(), t) {
			return true
		}
	}
	return false
}

// userTeams is every workspace a user is a member of: home first.
func userTeams(u User) []string {
	return append([]string{u.TeamID}, u.Teams...)
}

// reachesUserLocked reports whether an installation's bot can see a user:
// a member of one of its workspaces, or someone it shares a channel with
// ("A bot user is able to DM users on all connected workspaces, as long as
// users are in a shared channel together",
// https://docs.slack.dev/apis/slack-connect).
func (s *Server) reachesUserLocked(in *install, u User) bool {
	if in == nil || !s.multiLocked() || u.ID == in.BotUserID {
		return true
	}
	served := in.servedTeams()
	for _, t := range userTeams(u) {
		if slices.Contains(served, t) {
			return true
		}
	}
	for ch, sharing := range s.opts.SharedChannels {
		if !s.reachesChannelLocked(in, ch) {
			continue
		}
		for _, t := range userTeams(u) {
			if t == s.channelTeamLocked(ch) || slices.Contains(sharing, t) {
				return true
			}
		}
	}
	return false
}

// registerLocked makes an install current under its key (a reinstall
// replaces the record; tokens issued before keep naming the old one).
func (s *Server) registerLocked(in *install) {
	k := in.key()
	if old, ok := s.ws.installs[k]; ok {
		s.ws.instList = slices.DeleteFunc(s.ws.instList, func(o *install) bool { return o == old })
	}
	s.ws.installs[k] = in
	s.ws.instList = append(s.ws.instList, in)
	s.notifyLocked()
}

// Install registers an installation as if the OAuth flow had run, and
// returns it with what was left empty filled in: tokens (with
// Options.TokenRotation a refresh token and ExpiresAt), bot user and bot
// ids (the default team's install gets Options.BotUserID and BotID), the
// app id, EnterpriseID from the team. An org-wide install (OrgWide,
// EnterpriseID) serves no workspace until AddToWorkspace.
func (s *Server) Install(in Installation) Installation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.installLocked(in).Installation
}

func (s *Server) installLocked(in Installation) *install {
	if in.OrgWide {
		in.TeamID = ""
	} else if in.TeamID == "" {
		in.TeamID = s.opts.TeamID
	}
	if in.EnterpriseID == "" && !in.OrgWide {
		in.EnterpriseID = s.teamLocked(in.TeamID).EnterpriseID
	}
	if in.AppID == "" {
		in.AppID = s.opts.AppID
	}
	if old, ok := s.ws.installs[in.key()]; ok {
		// A reinstall keeps the workspace's bot user.
		if in.BotUserID == "" {
			in.BotUserID = old.BotUserID
		}
		if in.BotID == "" {
			in.BotID = old.BotID
		}
	}
	if in.BotUserID == "" {
		switch {
		case !in.OrgWide && in.TeamID == s.opts.TeamID:
			in.BotUserID = s.opts.BotUserID
		case in.OrgWide:
			in.BotUserID = s.newIDLocked("W") // an org-wide bot is a Grid user (W…)
		default:
			in.BotUserID = s.newIDLocked("U")
		}
	}
	if in.BotID == "" {
		if !in.OrgWide && in.TeamID == s.opts.TeamID {
			in.BotID = s.opts.BotID
		} else {
			in.BotID = s.newIDLocked("B")
		}
	}
	rec := &install{Installation: in}
	if old, ok := s.ws.installs[in.key()]; ok && in.OrgWide {
		rec.workspaces = slices.Clone(old.workspaces)
	}
	now := s.opts.Now()
	if rec.BotToken == "" {
		rec.BotToken = s.newAccessTokenLocked(rec)
	}
	tok := &token{inst: rec, issued: now}
	if s.opts.TokenRotation {
		if rec.ExpiresAt.IsZero() {
			rec.ExpiresAt = now.Add(s.opts.TokenTTL)
		}
		tok.expires = rec.ExpiresAt
		if rec.RefreshToken == "" {
			rec.RefreshToken = s.newRefreshTokenLocked()
		}
	}
	s.ws.tokens[rec.BotToken] = tok
	if rec.RefreshToken != "" {
		s.ws.tokens[rec.RefreshToken] = &token{inst: rec, issued: now, refresh: true}
	}
	s.registerLocked(rec)
	return rec
}

// newAccessTokenLocked is a bot token in Slack's forms: xoxb-… (the
// oauth.v2.access example), or xoxe.xoxb-1-… for an expiring token
// (https://docs.slack.dev/authentication/using-token-rotation).
func (s *Server) newAccessTokenLocked(in *install) string {
	s.ws.seq++
	if s.opts.TokenRotation {
		return fmt.Sprintf("xoxe.xoxb-1-%s%d-%s", strings.TrimLeft(in.key(), "TE"), s.ws.seq, randHex(24))
	}
	return fmt.Sprintf("xoxb-%d-%d-%s", 17653672481+s.ws.seq, 19874698323+s.ws.seq, randAlnum(24))
}

func (s *Server) newRefreshTokenLocked() string {
	s.ws.seq++
	return fmt.Sprintf("xoxe-1-%d-%s", s.ws.seq, randHex(32))
}

// Installations returns the current installations (not uninstalled), in
// install order, with their current tokens.
func (s *Server) Installations() []Installation {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Installation
	for _, in := range s.ws.instList {
		if !in.uninstalled {
			c := in.Installation
			c.Scopes = slices.Clone(in.Scopes)
			out = append(out, c)
		}
	}
	return out
}

// AddToWorkspace adds an org-wide installation of enterpriseID to one of
// the organization's workspaces, as the org admin does in the admin
// console: only then does its token reach that workspace's channels and
// people, and payloads from there go to it.
func (s *Server) AddToWorkspace(enterpriseID, teamID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.ws.installs[enterpriseID]
	if !ok || !in.OrgWide {
		panic(fmt.Sprintf("slackfake: AddToWorkspace: no org-wide installation for %s", enterpriseID))
	}
	if !slices.Contains(in.workspaces, teamID) {
		in.workspaces = append(in.workspaces, teamID)
	}
	s.notifyLocked()
}

// resolveLocked is the installation a Web API token stands for, or the
// Slack error for the token: invalid_auth (unknown), token_revoked,
// token_expired (https://docs.slack.dev/authentication/using-token-rotation:
// "you'll receive an error when you make an API call with the expired
// access token"). While no installation is registered any token stands
// for the default team, as the single-workspace fake always did.
func (s *Server) resolveLocked(tok string) (*install, string) {
	if len(s.ws.instList) == 0 && s.opts.BotToken == "" {
		if s.ws.implicit.uninstalled {
			return nil, "token_revoked"
		}
		return s.ws.implicit, ""
	}
	t, ok := s.ws.tokens[tok]
	if !ok || t.refresh {
		return nil, "invalid_auth"
	}
	now := s.opts.Now()
	switch {
	case t.revoked || t.inst.uninstalled:
		return nil, "token_revoked"
	case !t.expires.IsZero() && !now.Before(t.expires):
		return nil, "token_expired"
	}
	return t.inst, ""
}

// installForTeamLocked is the installation that serves a workspace: its
// own install, else an org-wide install added to it; nil if none.
func (s *Server) installForTeamLocked(teamID string) *install {
	if in, ok := s.ws.installs[teamID]; ok && !in.uninstalled && !in.OrgWide {
		return in
	}
	for _, in := range s.ws.instList {
		if in.OrgWide && !in.uninstalled && slices.Contains(in.workspaces, teamID) {
			return in
		}
	}
	if len(s.ws.instList) == 0 && teamID == s.opts.TeamID && !s.ws.implicit.uninstalled {
		return s.ws.implicit
	}
	return nil
}

// callerLocked is the installation of the Web API call being served (set
// by dispatchLocked around the handler); the implicit one outside a call.
func (s *Server) callerLocked() *install {
	if s.caller != nil {
		return s.caller
	}
	return s.ws.implicit
}

// botUserLocked is the bot user of the call's installation.
func (s *Server) botUserLocked() string { return s.callerLocked().BotUserID }

// actingTeamLocked is the workspace an installation acts in for a channel: the
// channel's owner when the installation serves it, else the first of its
// workspaces in the channel (a Slack Connect channel owned elsewhere),
// else its own team.
func (s *Server) actingTeamLocked(in *install, ch string) string {
	if in == nil {
		in = s.ws.implicit
	}
	if !s.multiLocked() {
		return s.opts.TeamID
	}
	if ch != "" {
		if _, dm := s.dmInstalls[ch]; !dm {
			for _, t := range s.channelTeamsLocked(ch) {
				if slices.Contains(in.servedTeams(), t) {
					return t
				}
			}
		}
	}
	if in.OrgWide {
		if len(in.workspaces) > 0 {
			return in.workspaces[0]
		}
		return in.EnterpriseID
	}
	return in.TeamID
}

// installedTeam is the "app_installed_team_id" of a view: the team, or for
// an org-wide install its enterprise.
func (in *install) installedTeam() string {
	if in.OrgWide {
		return in.EnterpriseID
	}
	return in.TeamID
}

func init() {
	apiMethods["conversations.info"] = (*Server).conversationsInfo
}

// conversationsInfo answers a conversation object with the shared-channel
// flags Slack Connect apps go by: is_shared (with any other workspace),
// is_ext_shared (with another organization), is_org_shared (between
// workspaces of one Grid organization), plus context_team_id,
// conversation_host_id and shared_team_ids
// (https://docs.slack.dev/apis/slack-connect: "Use the is_ext_shared,
// is_private, and is_mpim flags exclusively to determine the privacy and
// type of a given channel"; https://docs.slack.dev/reference/objects/conversation-object).
func (s *Server) conversationsInfo(p map[string]string) reply {
	ch := p["channel"]
	if !s.channelExistsLocked(ch) {
		return fail("channel_not_found")
	}
	kind := s.kindLocked(ch)
	owner := s.channelTeamLocked(ch)
	shared := s.opts.SharedChannels[ch]
	ext := len(shared) > 0 && s.extSharedLocked(ch)
	c := map[string]any{
		"id": ch, "name": channelName(ch), "is_channel": kind == "public" || kind == "private",
		"is_group": false, "is_im": kind == "im", "is_mpim": kind == "mpim", "is_private": kind != "public",
		"is_archived": false, "is_general": false, "is_member": !s.botOutside[ch],
		"is_shared": len(shared) > 0, "is_ext_shared": ext, "is_org_shared": len(shared) > 0 && !ext,
		"context_team_id":      s.actingTeamLocked(s.caller, ch),
		"conversation_host_id": owner,
		"shared_team_ids":      s.channelTeamsLocked(ch),
	}
	if kind == "im" {
		for key, id := range s.dms {
			if id == ch {
				c["user"] = key[strings.LastIndex(key, "/")+1:]
			}
		}
	}
	return ok("channel", c)
}
