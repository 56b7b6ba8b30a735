package slackfake

import (
	"errors"
	"fmt"
	"slices"
)

// What payloads say about their workspace. Every interaction payload,
// event envelope and slash command names the workspace it comes from and
// the installation that serves it, so an app with several installations
// can pick the right token:
//
//   - block_actions from a message: "team" is the workspace the
//     installation acts in in that channel (the channel's owner, or for a
//     Slack Connect channel owned by another organization, the installed
//     workspace sharing it) — even when the clicking user is from the other
//     organization. view_submission and view_closed from such a user name
//     the user's own workspace in "team", the installed one staying in
//     view.app_installed_team_id. Slack confirmed both to Bolt's
//     maintainers (https://github.com/slackapi/bolt-js/issues/1614); the
//     user's home workspace is always user.team_id.
//   - events: the envelope's team_id "will mirror the first element in the
//     authorized_users array" (https://docs.slack.dev/apis/slack-connect),
//     with authorizations[].enterprise_id and is_enterprise_install
//     (https://api.slack.com/enterprise/apps/reference).
//   - slash commands "are not shared — they are limited only to the team
//     that has installed the app" (https://docs.slack.dev/apis/slack-connect):
//     a command from a workspace with no installation is not delivered.
//   - enterprise is {id, name} in a Grid workspace, else null;
//     is_enterprise_install says whether the serving install is org-wide.

// ErrNotInstalled: the app has no installation where this happens (the
// workspace never installed it, uninstalled it, or an org-wide install
// was not added to it), so Slack would send the app nothing.
var ErrNotInstalled = errors.New("slackfake: the app is not installed in this workspace")

// origin is the workspace context of one payload.
type origin struct {
	in   *install // the installation that serves it
	team Team     // the workspace named in "team" / team_id
}

func (s *Server) legacyOriginLocked() (origin, error) {
	if s.ws.implicit.uninstalled {
		return origin{}, fmt.Errorf("%w: the app was uninstalled", ErrNotInstalled)
	}
	return origin{in: s.ws.implicit, team: s.teamLocked(s.opts.TeamID)}, nil
}

// teamJSON is a payload's "team" object.
func (o origin) teamJSON() map[string]any {
	return map[string]any{"id": o.team.ID, "domain": o.team.Domain}
}

// channelInstallLocked is the installation serving a channel: the one that
// opened a DM, else that of its owner, else of a workspace sharing it.
func (s *Server) channelInstallLocked(ch string) *install {
	if k, dm := s.dmInstalls[ch]; dm {
		return s.ws.installs[k]
	}
	for _, t := range s.channelTeamsLocked(ch) {
		if in := s.installForTeamLocked(t); in != nil {
			return in
		}
	}
	return nil
}

// messageOriginLocked is the origin of an action on a message in channel
// ch posted by installation key (or "" for someone else's message).
func (s *Server) messageOriginLocked(ch, key string) (origin, error) {
	if !s.multiLocked() {
		return s.legacyOriginLocked()
	}
	in := s.ws.installs[key]
	if key == "" || in == nil || in.uninstalled || !s.reachesChannelLocked(in, ch) {
		in = s.channelInstallLocked(ch)
	}
	if in == nil || in.uninstalled {
		return origin{}, fmt.Errorf("%w: no installation serves channel %s", ErrNotInstalled, ch)
	}
	team := s.actingTeamLocked(in, ch)
	if t, dm := s.dmTeams[ch]; dm {
		team = t
	}
	return origin{in: in, team: s.teamLocked(team)}, nil
}

// viewOriginLocked is the origin of a view_submission / view_closed (or a
// click inside a modal) by u: the workspace the view was opened in, or the
// user's own when they are not a member of any workspace the installation
// serves (a Slack Connect user; see the file comment).
func (s *Server) viewOriginLocked(v *View, u User) (origin, error) {
	if !s.multiLocked() {
		return s.legacyOriginLocked()
	}
	in := s.installByKeyOrImplicitLocked(v.inst)
	if in.uninstalled || (in == s.ws.implicit && s.installForTeamLocked(s.opts.TeamID) == nil) {
		return origin{}, fmt.Errorf("%w: the installation that opened view %s is gone", ErrNotInstalled, v.ID)
	}
	team := v.teamID(s.actingTeamLocked(in, ""))
	if !s.memberOfServedLocked(in, s.fullUserLocked(u)) {
		team = s.fullUserLocked(u).TeamID
	}
	return origin{in: in, team: s.teamLocked(team)}, nil
}

// memberOfServedLocked reports whether u is a member of a workspace in serves.
func (s *Server) memberOfServedLocked(in *install, u User) bool {
	for _, t := range userTeams(u) {
		if slices.Contains(in.servedTeams(), t) {
			return true
		}
	}
	return false
}

// fullUserLocked is u as the fake knows them (team filled in).
func (s *Server) fullUserLocked(u User) User {
	if known, ok := s.usersByID[u.ID]; ok {
		if u.TeamID == "" {
			u.TeamID = known.TeamID
		}
		if u.Teams == nil {
			u.Teams = known.Teams
		}
		if u.EnterpriseID == "" {
			u.EnterpriseID = known.EnterpriseID
		}
	}
	if u.TeamID == "" {
		u.TeamID = s.opts.TeamID
	}
	return u
}

// commandOriginLocked is the origin of a slash command typed by u in ch:
// the channel's workspace when u is a member of it, else u's own workspace
// in the channel (a Slack Connect channel), else u's home; served by that
// workspace's installation only.
func (s *Server) commandOriginLocked(u User, ch string) (origin, error) {
	if !s.multiLocked() {
		return s.legacyOriginLocked()
	}
	u = s.fullUserLocked(u)
	team := u.TeamID
	inChannel := s.channelTeamsLocked(ch)
	if t, dm := s.dmTeams[ch]; dm {
		inChannel = []string{t}
	}
	for _, t := range inChannel {
		if slices.Contains(userTeams(u), t) {
			team = t
			break
		}
	}
	in := s.installForTeamLocked(team)
	if in == nil {
		return origin{}, fmt.Errorf("%w: %s typed a command in %s, whose workspace %s has no installation", ErrNotInstalled, u.ID, ch, team)
	}
	return origin{in: in, team: s.teamLocked(team)}, nil
}

// eventOriginLocked is the origin of an event about channel ch (or, with
// no channel, about user u): the installation serving the channel, acting
// in its workspace there.
func (s *Server) eventOriginLocked(ch string, u User) (origin, error) {
	if !s.multiLocked() {
		return s.legacyOriginLocked()
	}
	var in *install
	team := ""
	if _, opened := s.dmInstalls[ch]; ch != "" && ch[0] == 'D' && !opened && u.ID != "" {
		// A DM the fake did not open (say app_home_opened's): the user's.
		ch = ""
	}
	if ch != "" {
		in = s.channelInstallLocked(ch)
		if in != nil {
			team = s.actingTeamLocked(in, ch)
			if t, dm := s.dmTeams[ch]; dm {
				team = t
			}
		}
	} else if u.ID != "" {
		u = s.fullUserLocked(u)
		for _, t := range userTeams(u) {
			if in = s.installForTeamLocked(t); in != nil {
				team = t
				break
			}
		}
	} else {
		in, team = s.installForTeamLocked(s.opts.TeamID), s.opts.TeamID
	}
	if in == nil {
		return origin{}, fmt.Errorf("%w: no installation receives an event in %q", ErrNotInstalled, ch)
	}
	return origin{in: in, team: s.teamLocked(team)}, nil
}

// authorizationJSON is the envelope's one authorization for o
// (https://api.slack.com/enterprise/apps/reference: enterprise_id,
// team_id, user_id, is_bot, is_enterprise_install).
func (s *Server) authorizationJSON(o origin) map[string]any {
	var eid any
	if e := o.team.EnterpriseID; e != "" {
		eid = e
	} else if o.in.EnterpriseID != "" {
		eid = o.in.EnterpriseID
	}
	return map[string]any{"enterprise_id": eid, "team_id": o.team.ID,
		"user_id": o.in.BotUserID, "is_bot": true, "is_enterprise_install": o.in.OrgWide}
}
