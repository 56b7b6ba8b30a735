package slackfake

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

func rotatingServer(t *testing.T) (*Server, *clock) {
	t.Helper()
	clk := &clock{now: time.Unix(1700000000, 0)}
	o := oauthOptions()
	o.Now, o.TokenRotation = clk.Now, true
	return startMulti(t, o), clk
}

// postWith is a chat.postMessage with tok into C0SOLO; "" when it worked, else
// the Slack error.
func postWith(t *testing.T, s *Server, tok string) string {
	t.Helper()
	_, _, err := apiAs(s, tok).PostMessageContext(testCtx(t), "C0SOLO", slack.MsgOptionText("hi", false))
	if err == nil {
		return ""
	}
	return slackErr(err)
}

func refresh(t *testing.T, s *Server, rt string) map[string]any {
	t.Helper()
	return access(t, s, appClientID, appSecret, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
}

func TestTokenRotation(t *testing.T) {
	t.Parallel()
	s, clk := rotatingServer(t)
	body := access(t, s, appClientID, appSecret, url.Values{"code": {s.Authorize("T0SOLO", sam, false, []string{"chat:write"})}})
	tok1, rt1 := body["access_token"].(string), body["refresh_token"].(string)
	if !strings.HasPrefix(tok1, "xoxe.xoxb-1-") || !strings.HasPrefix(rt1, "xoxe-1-") || body["expires_in"] != float64(43200) {
		t.Fatalf("a rotating install: %v", body)
	}
	if in := s.Installations()[0]; in.RefreshToken != rt1 || !in.ExpiresAt.Equal(clk.Now().Add(12*time.Hour)) {
		t.Fatalf("Installation = %+v", in)
	}
	if e := postWith(t, s, tok1); e != "" {
		t.Fatal(e)
	}

	// Refreshed an hour in: a new pair; the old access token keeps working
	// until its own expiry ("will not immediately invalidate").
	clk.Advance(time.Hour)
	r := refresh(t, s, rt1)
	tok2, rt2 := r["access_token"].(string), r["refresh_token"].(string)
	if r["ok"] != true || tok2 == tok1 || rt2 == rt1 || r["expires_in"] != float64(43200) || r["team"].(map[string]any)["id"] != "T0SOLO" {
		t.Fatalf("refresh = %v", r)
	}
	if s.Refreshes("T0SOLO") != 1 || s.Installations()[0].BotToken != tok2 {
		t.Fatalf("Refreshes %d, current token %q", s.Refreshes("T0SOLO"), s.Installations()[0].BotToken)
	}
	if e := postWith(t, s, tok1); e != "" {
		t.Fatalf("the old access token before its expiry: %s", e)
	}
	if e := postWith(t, s, tok2); e != "" {
		t.Fatal(e)
	}
	// The used refresh token works within the grace period, then not.
	clk.Advance(time.Minute + time.Second)
	if r := refresh(t, s, rt1); r["error"] != "invalid_refresh_token" {
		t.Fatalf("a used refresh token after the grace period: %v", r)
	}
	// The old access token expires 12 hours after it was issued.
	clk.Advance(11 * time.Hour)
	if e := postWith(t, s, tok1); e != "token_expired" {
		t.Fatalf("the old access token after 12h: %q, want token_expired", e)
	}
	if c := s.Calls("chat.postMessage"); c[len(c)-1].Status != 200 || c[len(c)-1].Team != "" {
		t.Fatalf("token_expired answers HTTP 200 with no installation: %+v", c[len(c)-1])
	}
	if e := postWith(t, s, tok2); e != "" {
		t.Fatalf("the new token: %s", e)
	}

	// ExpireTokens expires the current token now.
	s.ExpireTokens("T0SOLO")
	if e := postWith(t, s, tok2); e != "token_expired" {
		t.Fatalf("after ExpireTokens: %q", e)
	}
	r = refresh(t, s, rt2)
	if e := postWith(t, s, r["access_token"].(string)); e != "" || s.Refreshes("T0SOLO") != 2 {
		t.Fatalf("after refreshing an expired token: %q, %d refreshes", e, s.Refreshes("T0SOLO"))
	}
}

func TestTokenRotationTwoActiveTokens(t *testing.T) {
	t.Parallel()
	s, clk := rotatingServer(t)
	body := access(t, s, appClientID, appSecret, url.Values{"code": {s.Authorize("T0SOLO", sam, false, []string{"chat:write"})}})
	toks := []string{body["access_token"].(string)}
	rt := body["refresh_token"].(string)
	for range 2 {
		clk.Advance(time.Minute)
		r := refresh(t, s, rt)
		toks, rt = append(toks, r["access_token"].(string)), r["refresh_token"].(string)
	}
	// "If more than 2 tokens exist after the refresh, the oldest additional
	// token will be revoked."
	if e := postWith(t, s, toks[0]); e != "token_revoked" {
		t.Fatalf("the oldest of three: %q, want token_revoked", e)
	}
	for _, tok := range toks[1:] {
		if e := postWith(t, s, tok); e != "" {
			t.Fatalf("one of the two newest: %s", e)
		}
	}
}

func TestRefreshNeedsRotation(t *testing.T) {
	t.Parallel()
	s := startMulti(t, oauthOptions())
	access(t, s, appClientID, appSecret, url.Values{"code": {s.Authorize("T0SOLO", sam, false, nil)}})
	if r := refresh(t, s, "xoxe-1-made-up"); r["error"] != "invalid_refresh_token" {
		t.Fatalf("refresh without token rotation: %v", r)
	}
	if in := s.Installations()[0]; !in.ExpiresAt.IsZero() || in.RefreshToken != "" {
		t.Fatalf("a non-rotating install: %+v", in)
	}
}
