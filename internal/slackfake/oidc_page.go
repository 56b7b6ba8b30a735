package slackfake

import (
	"bytes"
	"html/template"
	"net/http"
	"net/url"
	"slices"
)

// The page /openid/connect/authorize shows: Slack's sign-in and consent
// screens, reduced to a list of the workspace's people. Self-contained (an
// inline style, no script, nothing fetched), so it works offline and in any
// browser test; every value goes through html/template.

type authorizePage struct {
	Team     string
	Error    string // set: an error page, nothing else is shown
	ClientID string
	Scopes   []string
	Users    []pickerUser
	Hidden   []hiddenField // the request's parameters, for the free-form id field
	AnyUser  bool          // Options.Users is empty: any U…/W… id signs in
	Cancel   string        // redirect_uri with error=access_denied&state=…
}

type pickerUser struct {
	ID, Name, Email, Team string
	Href                  string // the same authorize URL, plus fake_user
}

type hiddenField struct{ Name, Value string }

// pickerPage lists Options.Users, each a link to the same request with
// fake_user=<id>, and a Cancel link that answers the app as Slack does when
// the person declines (error=access_denied, RFC 6749 §4.1.2.1).
func (s *Server) pickerPage(a authorizeRequest, state string) authorizePage {
	p := authorizePage{Team: s.opts.TeamDomain, ClientID: a.query.Get("client_id"),
		Scopes: a.scopes, AnyUser: len(s.opts.Users) == 0}
	for _, u := range s.opts.Users {
		u = s.usersByID[u.ID]
		q := cloneValues(a.query)
		q.Set("fake_user", u.ID)
		p.Users = append(p.Users, pickerUser{ID: u.ID, Name: u.Name, Email: u.Email, Team: u.TeamID,
			Href: "/openid/connect/authorize?" + q.Encode()})
	}
	keys := make([]string, 0, len(a.query))
	for k := range a.query {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range a.query[k] {
			p.Hidden = append(p.Hidden, hiddenField{k, v})
		}
	}
	back := url.Values{"error": {"access_denied"}}
	if state != "" {
		back.Set("state", state)
	}
	p.Cancel = withQuery(a.redirect, back)
	return p
}

func cloneValues(v url.Values) url.Values {
	c := make(url.Values, len(v))
	for k, vs := range v {
		c[k] = slices.Clone(vs)
	}
	return c
}

func (s *Server) writeAuthorizePage(w http.ResponseWriter, status int, p authorizePage) {
	if p.Team == "" {
		p.Team = s.opts.TeamDomain
	}
	var buf bytes.Buffer
	if err := authorizeTmpl.Execute(&buf, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

var authorizeTmpl = template.Must(template.New("authorize").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in to {{.Team}}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; background: #f8f8f8; color: #1d1c1d; margin: 0; }
main { max-width: 30rem; margin: 3rem auto; background: #fff; border: 1px solid #ddd; border-radius: 8px; padding: 1.5rem 2rem; }
h1 { font-size: 1.5rem; margin: 0 0 .75rem; }
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
<h1>Sign in to {{.Team}}</h1>
{{- if .Error}}
<p class="error" role="alert">{{.Error}}</p>
{{- else}}
<p>App <code>{{.ClientID}}</code> asks to sign you in and see:{{range .Scopes}} <code>{{.}}</code>{{end}}</p>
<p class="note">This is slackfake, a fake Slack with no passwords: pick who signs in.</p>
{{- if .Users}}
<ul>
{{- range .Users}}
<li><a href="{{.Href}}" data-user="{{.ID}}"><strong>{{.Name}}</strong> <span>{{.ID}}{{if .Email}} · {{.Email}}{{end}} · {{.Team}}</span></a></li>
{{- end}}
</ul>
{{- end}}
{{- if .AnyUser}}
<form method="get" action="/openid/connect/authorize">
{{- range .Hidden}}
<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{- end}}
<label>User id <input name="fake_user" required placeholder="U0123ABC"></label>
<button type="submit">Sign in</button>
</form>
{{- end}}
<p><a class="cancel" id="cancel" href="{{.Cancel}}">Cancel</a></p>
{{- end}}
</main>
</body>
</html>
`))
