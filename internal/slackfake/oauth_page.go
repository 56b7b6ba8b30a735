package slackfake

import (
	"bytes"
	"html/template"
	"net/http"
	"net/url"
)

// The page /oauth/v2/authorize shows: Slack's install consent screen with
// its workspace picker, reduced to links. Self-contained like the OIDC
// page (oidc_page.go): inline style, no script, html/template throughout.

type installPage struct {
	Error     string
	ClientID  string
	Scopes    []string
	User      *pickerUser     // who installs; nil: pick a person first
	Users     []pickerUser    // the people to pick from
	Teams     []installTarget // workspaces to install into
	Orgs      []installTarget // organizations, for an org-wide install
	Cancel    string
	HasPeople bool
}

type installTarget struct {
	ID, Name, Href string
}

func (s *Server) installPickerPage(a oauthRequest, state string) installPage {
	p := installPage{ClientID: a.query.Get("client_id"), Scopes: a.scopes, Cancel: cancelURL(a.redirect, state), HasPeople: true}
	for _, u := range s.opts.Users {
		u = s.usersByID[u.ID]
		q := cloneValues(a.query)
		q.Set("fake_user", u.ID)
		p.Users = append(p.Users, pickerUser{ID: u.ID, Name: u.Name, Email: u.Email, Team: u.TeamID,
			Href: "/oauth/v2/authorize?" + q.Encode()})
	}
	return p
}

func (s *Server) installChoicePage(a oauthRequest, state string, u User, teams []Team, ents []string) installPage {
	p := installPage{ClientID: a.query.Get("client_id"), Scopes: a.scopes, Cancel: cancelURL(a.redirect, state),
		User: &pickerUser{ID: u.ID, Name: u.Name, Team: u.TeamID}, HasPeople: len(s.opts.Users) > 0}
	link := func(k, v string) string {
		q := cloneValues(a.query)
		q.Set("fake_user", u.ID)
		q.Set(k, v)
		return "/oauth/v2/authorize?" + q.Encode()
	}
	for _, t := range teams {
		p.Teams = append(p.Teams, installTarget{ID: t.ID, Name: t.Name, Href: link("fake_team", t.ID)})
	}
	s.mu.Lock()
	for _, e := range ents {
		name := s.enterpriseNameLocked(e)
		if name == "" {
			name = e
		}
		p.Orgs = append(p.Orgs, installTarget{ID: e, Name: name, Href: link("fake_enterprise", e)})
	}
	s.mu.Unlock()
	return p
}

// cancelURL answers the app as Slack does when the person declines
// (error=access_denied, RFC 6749 §4.1.2.1).
func cancelURL(redirect, state string) string {
	back := url.Values{"error": {"access_denied"}}
	if state != "" {
		back.Set("state", state)
	}
	return withQuery(redirect, back)
}

func (s *Server) writeInstallPage(w http.ResponseWriter, status int, p installPage) {
	var buf bytes.Buffer
	if err := installTmpl.Execute(&buf, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

var installTmpl = template.Must(template.New("install").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Install the app</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; background: #f8f8f8; color: #1d1c1d; margin: 0; }
main { max-width: 30rem; margin: 3rem auto; background: #fff; border: 1px solid #ddd; border-radius: 8px; padding: 1.5rem 2rem; }
h1 { font-size: 1.5rem; margin: 0 0 .75rem; }
h2 { font-size: 1.05rem; margin: 1rem 0 .25rem; }
.note { color: #616061; font-size: .9rem; }
.error { color: #e01e5a; font-weight: 600; }
ul { list-style: none; padding: 0; }
li a { display: block; padding: .6rem .8rem; margin: .4rem 0; border: 1px solid #ddd; border-radius: 6px; color: inherit; text-decoration: none; }
li a:hover, li a:focus { border-color: #1264a3; background: #f4f9fd; }
li span { color: #616061; font-size: .85rem; }
code { background: #f1f1f1; padding: 0 .25rem; border-radius: 3px; }
.cancel { color: #1264a3; }
</style>
</head>
<body>
<main>
<h1>Install the app</h1>
{{- if .Error}}
<p class="error" role="alert">{{.Error}}</p>
{{- else}}
<p>App <code>{{.ClientID}}</code> asks to be installed with:{{range .Scopes}} <code>{{.}}</code>{{end}}</p>
<p class="note">This is slackfake, a fake Slack with no passwords.</p>
{{- if not .User}}
<h2>Who is installing?</h2>
<ul>
{{- range .Users}}
<li><a href="{{.Href}}" data-user="{{.ID}}"><strong>{{.Name}}</strong> <span>{{.ID}}{{if .Email}} · {{.Email}}{{end}} · {{.Team}}</span></a></li>
{{- end}}
</ul>
{{- else}}
{{- if .HasPeople}}<p>Installing as <strong>{{.User.Name}}</strong> <span class="note">{{.User.ID}}</span></p>{{end}}
{{- if .Teams}}
<h2>Install into a workspace</h2>
<ul>
{{- range .Teams}}
<li><a href="{{.Href}}" data-team="{{.ID}}"><strong>{{.Name}}</strong> <span>{{.ID}}</span></a></li>
{{- end}}
</ul>
{{- end}}
{{- if .Orgs}}
<h2>Install into the whole organization</h2>
<ul>
{{- range .Orgs}}
<li><a href="{{.Href}}" data-enterprise="{{.ID}}"><strong>{{.Name}}</strong> <span>{{.ID}} · org-wide; an admin then adds it to workspaces</span></a></li>
{{- end}}
</ul>
{{- end}}
{{- if not (or .Teams .Orgs)}}
<p class="error" role="alert">There is no workspace here you may install the app into.</p>
{{- end}}
{{- end}}
<p><a class="cancel" data-cancel href="{{.Cancel}}">Cancel</a></p>
{{- end}}
</main>
</body>
</html>
`))
