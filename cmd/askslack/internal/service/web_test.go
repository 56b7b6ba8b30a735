package service

import (
	"strings"
	"testing"
	"time"
)

// The answer page's settings: all three or none, an https URL (http on
// loopback only) without a path, ids for the admins; each error names the
// variable.
func TestWebConfig(t *testing.T) {
	t.Parallel()
	base := Config{BotToken: "xoxb-1", AppToken: "xapp-1", RedisPrefix: "askslack", Addr: ":8080",
		Retention: 168 * time.Hour, ClaimLease: 15 * time.Second, ReattachGrace: 30 * time.Second,
		ReadTimeout: 30 * time.Second, ShutdownGrace: time.Second, LogLevel: "info", ReconcileAfter: time.Minute, Delivery: "channel"}
	on := func(c *Config) {
		c.WebURL, c.ClientID, c.ClientSecret = "https://askslack.example.com/", "1.2", "s"
		c.AllowedUsers = []string{"U0ALICE"}
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" for no error
	}{
		{"off", func(*Config) {}, ""},
		{"on", on, ""},
		{"on, loopback http", func(c *Config) { on(c); c.WebURL = "http://127.0.0.1:8080" }, ""},
		{"URL alone", func(c *Config) { c.WebURL = "https://askslack.example.com"; c.AllowedUsers = []string{"U0ALICE"} }, "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are not set"},
		{"no allowlist", func(c *Config) { on(c); c.AllowedUsers = nil }, "needs ASKSLACK_ALLOWED_USERS or ASKSLACK_ALLOWED_GROUPS"},
		{"a group allowlist", func(c *Config) { on(c); c.AllowedUsers, c.AllowedGroups = nil, []string{"S0TEAM"} }, ""},
		{"a session of two days", func(c *Config) { on(c); c.WebSession = 48 * time.Hour }, "ASKSLACK_WEB_SESSION"},
		{"secret missing", func(c *Config) { on(c); c.ClientSecret = "" }, "SLACK_CLIENT_SECRET is not set"},
		{"http off loopback", func(c *Config) { on(c); c.WebURL = "http://askslack.example.com" }, "must use https"},
		{"a path", func(c *Config) { on(c); c.WebURL = "https://example.com/askslack" }, "without a path"},
		{"an admin by name", func(c *Config) { on(c); c.WebAdmins = []string{"@bob"} }, "ASKSLACK_WEB_ADMINS"},
		{"a session of a minute", func(c *Config) { on(c); c.WebSession = time.Minute }, "ASKSLACK_WEB_SESSION"},
	} {
		c := base
		tc.edit(&c)
		err := c.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want an error saying %q", tc.name, err, tc.want)
		}
		if tc.name == "on" && c.WebURL != "https://askslack.example.com" {
			t.Errorf("the URL is kept as %q", c.WebURL)
		}
	}
}
