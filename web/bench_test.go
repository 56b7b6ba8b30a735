package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askslack/askslack/waterfall"
)

// benchSession signs alice in through the real flow and returns a request
// builder carrying her cookie.
func benchSession(b *testing.B, e *env) func(path string) *http.Request {
	br := e.browser()
	e.mustSignIn(br, alice)
	u := e.base + "/"
	req0, _ := http.NewRequest(http.MethodGet, u, nil)
	cookies := br.c.Jar.Cookies(req0.URL)
	return func(path string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		for _, c := range cookies {
			r.AddCookie(c)
		}
		return r
	}
}

// BenchmarkAskPage40KB: one ask page with a 40 KB plan, rendered whole
// (the session read, the ask read, the Markdown, the template).
func BenchmarkAskPage40KB(b *testing.B) {
	e := newEnv(b)
	var plan strings.Builder
	for i := 0; plan.Len() < 40<<10; i++ {
		fmt.Fprintf(&plan, "## Step %d\n\n- change `file%d.go`\n\n| a | b |\n|---|---|\n| %d | x |\n\n```diff\n-old\n+new\n```\n\n", i, i, i)
	}
	e.open(&waterfall.Request{CallID: "plan", Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{
		ID: "plan", Question: "Approve?", Detail: plan.String(), Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"},
		Options: []waterfall.Option{{Label: "Approve"}, {Label: "Decline"}}}}})
	req := benchSession(b, e)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.web.ServeHTTP(w, req("/app/asks/plan"))
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkInbox200: the inbox with 200 open asks, each authorized.
func BenchmarkInbox200(b *testing.B) {
	e := newEnv(b)
	for i := range 200 {
		e.open(dbQuestion(fmt.Sprintf("c%03d", i)))
	}
	req := benchSession(b, e)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.web.ServeHTTP(w, req("/app/"))
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "c199") {
			b.Fatal(w.Code)
		}
	}
}
