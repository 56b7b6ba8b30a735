package slackfake

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// The control API under /_fake/ lets a person (curl) or another process drive
// the fake; see the package documentation.

type callOut struct {
	Method   string            `json:"method"`
	Params   map[string]string `json:"params"`
	Body     string            `json:"body"`
	Status   int               `json:"status"`
	Response json.RawMessage   `json:"response"`
	At       time.Time         `json:"at"`
}

type messageOut struct {
	Channel  string          `json:"channel"`
	TS       string          `json:"ts"`
	Text     string          `json:"text"`
	Blocks   json.RawMessage `json:"blocks,omitempty"`
	Updated  int             `json:"updated"`
	ThreadTS string          `json:"thread_ts,omitempty"`
	User     string          `json:"user"`
}

type viewOut struct {
	ID        string            `json:"id"`
	Hash      string            `json:"hash"`
	TriggerID string            `json:"trigger_id"`
	UserID    string            `json:"user_id"`
	RootID    string            `json:"root_id"`
	Closed    bool              `json:"closed"`
	Updated   int               `json:"updated"`
	Errors    map[string]string `json:"errors,omitempty"`
	View      json.RawMessage   `json:"view"`
}

type controlRequest struct {
	Channel  string              `json:"channel"`
	TS       string              `json:"ts"`
	User     string              `json:"user"`
	Button   string              `json:"button"`
	ActionID string              `json:"action_id"`
	Value    string              `json:"value"`
	Options  []string            `json:"options"`
	ViewID   string              `json:"view_id"`
	Values   map[string][]string `json:"values"`
	Reason   string              `json:"reason"`
	// Team names an installation (team id, or enterprise id when org-wide)
	// for uninstall, revoke and expire.
	Team string `json:"team"`
	// Transport is "", "auto", "http" or "socket".
	Transport string `json:"transport"`
}

// installationOut is an installation as GET /_fake/installations lists it
// (no tokens: the control API is for people driving the fake by hand).
type installationOut struct {
	TeamID       string    `json:"team_id,omitempty"`
	EnterpriseID string    `json:"enterprise_id,omitempty"`
	OrgWide      bool      `json:"is_enterprise_install"`
	BotUserID    string    `json:"bot_user_id"`
	Installer    string    `json:"installer,omitempty"`
	Scopes       []string  `json:"scopes"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
}

type deliveryOut struct {
	Transport string `json:"transport,omitempty"`
	Status    int    `json:"status,omitempty"`
	Body      string `json:"body"`
	Error     string `json:"error,omitempty"`
}

func (s *Server) lookupUser(id string) User {
	if u, ok := s.usersByID[id]; ok {
		return u
	}
	return User{ID: id, Name: strings.ToLower(id), TeamID: s.opts.TeamID}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(marshal(v), '\n'))
}

func (s *Server) handleControl(w http.ResponseWriter, r *http.Request) {
	what := strings.TrimPrefix(r.URL.Path, "/_fake/")
	switch r.Method {
	case http.MethodGet:
		s.controlRead(w, r, what)
	case http.MethodPost:
		s.controlAct(w, r, what)
	default:
		http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
	}
}

// controlRead serves GET /_fake/{messages,ephemerals,views,calls}.
func (s *Server) controlRead(w http.ResponseWriter, r *http.Request, what string) {
	switch what {
	case "messages":
		out := []messageOut{}
		for _, m := range s.Messages() {
			out = append(out, messageOut{m.Channel, m.TS, m.Text, m.Blocks, m.Updated, m.ThreadTS, m.User})
		}
		writeJSON(w, http.StatusOK, out)
	case "ephemerals":
		writeJSON(w, http.StatusOK, s.Ephemerals())
	case "views":
		out := []viewOut{}
		for _, v := range s.Views() {
			out = append(out, viewOut{v.ID, v.Hash, v.TriggerID, v.UserID, v.RootID, v.Closed, v.Updated, v.Errors, v.JSON})
		}
		writeJSON(w, http.StatusOK, out)
	case "installations":
		out := []installationOut{}
		for _, in := range s.Installations() {
			out = append(out, installationOut{in.TeamID, in.EnterpriseID, in.OrgWide, in.BotUserID, in.Installer, in.Scopes, in.ExpiresAt})
		}
		writeJSON(w, http.StatusOK, out)
	case "calls":
		out := []callOut{}
		for _, c := range s.Calls(r.URL.Query().Get("method")) {
			out = append(out, callOut{c.Method, c.Params, string(c.Body), c.Status, c.Response, c.At})
		}
		writeJSON(w, http.StatusOK, out)
	default:
		http.NotFound(w, r)
	}
}

// controlAct serves POST /_fake/{click,select,submit,close,disconnect,trigger}:
// it acts as a person (or Slack) would and reports the app's answer.
func (s *Server) controlAct(w http.ResponseWriter, r *http.Request, what string) {
	var req controlRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch what {
	case "trigger":
		writeJSON(w, http.StatusOK, map[string]string{"trigger_id": s.IssueTrigger(req.User)})
		return
	case "expire":
		s.ExpireTokens(req.Team)
		writeJSON(w, http.StatusOK, map[string]string{})
		return
	case "click", "select", "submit", "close", "disconnect", "uninstall", "revoke":
	default:
		http.NotFound(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.AckTimeout+time.Second)
	defer cancel()
	resp, err := s.controlDeliver(ctx, what, req)
	out := deliveryOut{Body: string(resp.Body), Status: resp.Status}
	if resp.Status != 0 {
		out.Transport = resp.Transport.String()
	}
	status := http.StatusOK
	if err != nil {
		out.Error = err.Error()
		status = http.StatusUnprocessableEntity
	}
	s.logf("slackfake: control %s → %+v", what, out)
	writeJSON(w, status, out)
}

// controlDeliver performs one control action over the requested transport.
func (s *Server) controlDeliver(ctx context.Context, what string, req controlRequest) (Response, error) {
	d := Delivery{}
	switch req.Transport {
	case "http":
		d.Transport = TransportHTTP
	case "socket":
		d.Transport = TransportSocket
	}
	user := s.lookupUser(req.User)
	switch what {
	case "click":
		if req.Button != "" {
			return s.ClickButton(ctx, user, req.Channel, req.TS, req.Button, d)
		}
		return s.ClickButtonByAction(ctx, user, req.Channel, req.TS, req.ActionID, req.Value, d)
	case "select":
		return s.Select(ctx, user, req.Channel, req.TS, req.ActionID, req.Options, d)
	case "submit":
		return s.SubmitView(ctx, user, req.ViewID, req.Values, d)
	case "close":
		return s.CloseView(ctx, user, req.ViewID, d)
	case "uninstall":
		rs, err := s.UninstallContext(ctx, req.Team, d)
		if len(rs) > 0 {
			return rs[len(rs)-1].Response, err
		}
		return Response{}, err
	case "revoke":
		r, err := s.RevokeTokensContext(ctx, req.Team, d)
		return r.Response, err
	}
	s.Disconnect(req.Reason) // "disconnect"
	return Response{}, nil
}
