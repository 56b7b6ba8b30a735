package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askslack/askslack/asktype"
)

// TestCrossOriginProtection: http.CrossOriginProtection stands before every
// post. A sibling site is refused; ASKSLACK_WEB_URL's origin is taken even
// when the Host the bot sees is a proxy's; a cross-origin post from a
// browser with no session is refused with nothing to audit; and a post
// with neither Sec-Fetch-Site nor Origin (a browser that old) still needs
// the session's CSRF token.
func TestCrossOriginProtection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.open(dbQuestion("c"))
	e.open(dbQuestion("d"))
	b := e.browser()
	e.mustSignIn(b, alice)
	tok := csrfOf(t, b.get(e.base+"/app/"))

	if p := b.post(e.base+"/app/asks/c", url.Values{"csrf": {tok}, "q0": {"0"}}, "Sec-Fetch-Site", "same-site", "Origin", "https://evil."+strings.TrimPrefix(e.base, "http://")); p.status != http.StatusForbidden ||
		!strings.Contains(p.body, "did not come from this page") {
		t.Fatalf("a post from a sibling site: %d %s", p.status, p.body)
	}
	wantRefusedPosts(t, e, "c", alice, 1, "another site (Sec-Fetch-Site)")
	if p := b.post(e.base+"/app/console/rules/1/revoke", url.Values{"csrf": {tok}}, "Origin", "https://evil.example"); p.status != http.StatusForbidden {
		t.Fatalf("a revoke from another origin: %d %s", p.status, p.body)
	}
	wantRefusedPosts(t, e, "", alice, 1, "/app/console/rules/1/revoke: it came from another origin (Origin)")

	// Behind a proxy that sends its own Host: the public origin is trusted.
	req, _ := http.NewRequest(http.MethodPost, e.base+"/app/asks/c", strings.NewReader(url.Values{"csrf": {tok}, "q0": {"0"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.base)
	req.Host = "askslack.internal:8080"
	u, _ := url.Parse(e.base)
	for _, c := range b.c.Jar.Cookies(u) { // the jar would look them up by the Host
		req.AddCookie(c)
	}
	if p := (&browser{t: t, c: &http.Client{CheckRedirect: b.c.CheckRedirect}}).do(req); p.header.Get("Location") != "/app/asks/c?m=answered" {
		t.Fatalf("a post from the page through a proxy: %d %q %s", p.status, p.header.Get("Location"), p.body)
	}

	// Signed out: refused, and nobody to record it against.
	before, _, _ := e.host.Audit(context.Background(), asktype.AuditQuery{})
	if p := e.browser().post(e.base+"/app/asks/d", url.Values{"q0": {"0"}}, "Sec-Fetch-Site", "cross-site"); p.status != http.StatusForbidden {
		t.Fatalf("a cross-site post with no session: %d %s", p.status, p.body)
	}
	if after, _, _ := e.host.Audit(context.Background(), asktype.AuditQuery{}); len(after) != len(before) {
		t.Fatalf("a refusal with no session was audited: %+v", after[len(before):])
	}

	// Neither header, as from a browser too old to send them: the token decides.
	if p := b.post(e.base+"/app/asks/d", url.Values{"q0": {"0"}}); p.status != http.StatusForbidden || !strings.Contains(p.body, "security token") {
		t.Fatalf("a post with neither header nor token: %d %s", p.status, p.body)
	}
	wantRefusedPosts(t, e, "d", alice, 1, "CSRF token is missing or wrong")
}
