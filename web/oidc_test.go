package web

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/slackfake"
)

// TestVerifyIDToken: an ID token is taken only when Slack signed it, for
// this app, for this sign-in, and it is still fresh.
func TestVerifyIDToken(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(slackfake.Options{OIDCClientID: clientID})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	now := time.Now()
	c := &oidcClient{provider: ProviderFor(fake.APIURL()), clientID: clientID, http: http.DefaultClient, now: func() time.Time { return now }}
	claims := func(edit func(map[string]any)) map[string]any {
		m := map[string]any{"iss": "https://slack.com", "sub": "U0ALICE", "aud": clientID, "exp": now.Add(5 * time.Minute).Unix(),
			"iat": now.Unix(), "nonce": "n0nce", claimTeam: "T0FAKE", claimUser: "U0ALICE", "name": "alice"}
		if edit != nil {
			edit(m)
		}
		return m
	}
	good := fake.SignIDToken(claims(nil))
	id, err := c.verify(context.Background(), good, "n0nce")
	if err != nil || id.User != "U0ALICE" || id.Team != "T0FAKE" || id.Name != "alice" {
		t.Fatalf("a good token: %+v %v", id, err)
	}
	parts := strings.Split(good, ".")
	enc := base64.RawURLEncoding.EncodeToString
	for name, tc := range map[string]struct {
		token, nonce, want string
	}{
		"another nonce":         {good, "other", "nonce"},
		"no nonce expected":     {good, "", "nonce"},
		"another app":           {fake.SignIDToken(claims(func(m map[string]any) { m["aud"] = "9999.1" })), "n0nce", "another app"},
		"another issuer":        {fake.SignIDToken(claims(func(m map[string]any) { m["iss"] = "https://evil.example" })), "n0nce", "issued by"},
		"expired":               {fake.SignIDToken(claims(func(m map[string]any) { m["exp"] = now.Add(-time.Hour).Unix() })), "n0nce", "expired"},
		"from the future":       {fake.SignIDToken(claims(func(m map[string]any) { m["iat"] = now.Add(time.Hour).Unix() })), "n0nce", "future"},
		"no user":               {fake.SignIDToken(claims(func(m map[string]any) { delete(m, claimUser) })), "n0nce", "names no Slack user"},
		"subject is not user":   {fake.SignIDToken(claims(func(m map[string]any) { m["sub"] = "U0MALLORY" })), "n0nce", "subject"},
		"claims edited":         {parts[0] + "." + enc([]byte(`{"iss":"https://slack.com","aud":"`+clientID+`","nonce":"n0nce","https://slack.com/user_id":"U0MALLORY"}`)) + "." + parts[2], "n0nce", "signature"},
		"alg none":              {enc([]byte(`{"alg":"none"}`)) + "." + parts[1] + ".", "n0nce", `"none"`},
		"alg HS256":             {enc([]byte(`{"alg":"HS256","kid":"x"}`)) + "." + parts[1] + "." + parts[2], "n0nce", `"HS256"`},
		"unknown key":           {enc([]byte(`{"alg":"RS256","kid":"made-up"}`)) + "." + parts[1] + "." + parts[2], "n0nce", "does not publish"},
		"not a JWT":             {"abc.def", "n0nce", "not a JWT"},
		"signature not base64":  {parts[0] + "." + parts[1] + ".***", "n0nce", "base64url"},
		"aud array of two apps": {fake.SignIDToken(claims(func(m map[string]any) { m["aud"] = []string{clientID, "other"} })), "n0nce", "another app"},
	} {
		if _, err := c.verify(context.Background(), tc.token, tc.nonce); err == nil || !isRefusal(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want a refusal naming %q", name, err, tc.want)
		}
	}
}

func TestProviderFor(t *testing.T) {
	t.Parallel()
	for api, want := range map[string]Provider{
		"":                           {Base: "https://slack.com", API: "https://slack.com/api/"},
		"http://127.0.0.1:9/api/":    {Base: "http://127.0.0.1:9", API: "http://127.0.0.1:9/api/"},
		"http://127.0.0.1:9/api":     {Base: "http://127.0.0.1:9", API: "http://127.0.0.1:9/api/"},
		"https://slack.example/api/": {Base: "https://slack.example", API: "https://slack.example/api/"},
	} {
		if got := ProviderFor(api); got != want {
			t.Errorf("ProviderFor(%q) = %+v; want %+v", api, got, want)
		}
	}
}
