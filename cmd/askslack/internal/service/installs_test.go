package service

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Add to Slack asks for the manifest's bot scopes, no more and no fewer.
func TestInstallAsksForTheManifestsBotScopes(t *testing.T) {
	b, err := os.ReadFile("../../../../deploy/slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		OAuth struct {
			Scopes struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	got, want := slices.Sorted(slices.Values(botScopes)), slices.Sorted(slices.Values(m.OAuth.Scopes.Bot))
	if !slices.Equal(got, want) {
		t.Fatalf("botScopes %v; the manifest's %v", got, want)
	}
}

func TestSeveralWorkspacesConfigSaysWhatIsMissing(t *testing.T) {
	c := &Config{Addr: ":8080", RedisPrefix: "askslack", LogLevel: "info", Retention: 168 * 3600e9, ShutdownGrace: 1, ClaimLease: 15e9,
		ReconcileAfter: 60e9, ReattachGrace: 30e9, ReadTimeout: 30e9, SigningSecret: "s", Delivery: "channel", Threads: "off", SlackTimeScale: 1,
		Installing: Installing{InstallKeys: []string{"AAAA"}}, BotToken: "xoxb-1", Channel: "C1"}
	err := c.Check()
	if err == nil {
		t.Fatal("a several-workspaces config with nothing else was accepted")
	}
	for _, want := range []string{"ASKSLACK_INSTALL_KEYS: key 1", "SLACK_BOT_TOKEN and ASKSLACK_INSTALL_KEYS", "SLACK_CLIENT_ID", "ASKSLACK_INSTALL_TEAMS is not set", "ASKSLACK_INSTALL_URL", "ASKSLACK_CHANNEL is set"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	one := &Config{Installing: Installing{InstallTeams: []string{"T1"}}}
	if errs := one.checkInstalling(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "ASKSLACK_INSTALL_TEAMS is set but ASKSLACK_INSTALL_KEYS is not") {
		t.Fatalf("one workspace with an install setting: %v", errs)
	}
}
