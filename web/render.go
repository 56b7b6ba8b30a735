package web

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"
)

// page is what every page's layout shows: who is signed in, the form token,
// and whether the console is theirs.
type page struct {
	Title  string
	User   string
	Name   string
	CSRF   string
	Admin  bool
	Signed bool
}

func (s *Server) pageFor(sess *session, title string) page {
	name := sess.Name
	if name == "" {
		name = sess.User
	}
	return page{Title: title, User: sess.User, Name: name, CSRF: sess.CSRF, Admin: sess.Admin, Signed: true}
}

type signinPage struct {
	page
	Why  string
	Next string
	// Heading and Lead replace the inbox's words (the device page's).
	Heading, Lead string
}

type failPage struct {
	page
	Message string
}

// ago says how long ago t was, coarsely ("" for the zero time).
func ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}

var funcs = template.FuncMap{
	"ago": ago,
	"utc": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"dur": func(d time.Duration) string {
		if d <= 0 {
			return "–"
		}
		if d < time.Minute {
			return d.Round(time.Second).String()
		}
		return d.Round(time.Minute).String()
	},
	"short": func(h string) string {
		if len(h) > 12 {
			return h[:12]
		}
		return h
	},
	"kb":      func(n int) string { return fmt.Sprintf("%.1f KB", float64(n)/1024) },
	"join":    strings.Join,
	"inc":     func(i int) int { return i + 1 },
	"askPath": askPath,
}

// render writes a page; a template that fails writes nothing half-done.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages.ExecuteTemplate(&buf, name, data); err != nil {
		s.log.Error("rendering a web page failed", "page", name, "err", err)
		http.Error(w, "the page could not be shown", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail shows a page that says what went wrong.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "fail", failPage{page: page{Title: http.StatusText(status)}, Message: msg})
}
