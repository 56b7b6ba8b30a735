package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The token a client subcommand uses: --token, ASKSLACK_TOKEN, else the
// one askslack login stored for its URL, whichever order the flags come.
func TestClientFlagsFallBackToTheStoredToken(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	t.Setenv("ASKSLACK_URL", "")
	t.Setenv("ASKSLACK_TOKEN", "")
	for u, tok := range map[string]string{"http://127.0.0.1:8080": "askslack_pat_local", "https://AskSlack.example.com/": "askslack_pat_team"} {
		if _, err := SaveCredential(Credential{URL: u, Token: tok, ID: "at_" + tok}); err != nil {
			t.Fatal(err)
		}
	}
	path, _ := CredentialsPath()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file %v, %v; want mode 0600", fi, err)
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Fatalf("its directory has mode %v, want 0700", fi.Mode().Perm())
	}
	parse := func(args ...string) (string, string) {
		t.Helper()
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		u, tok := ClientFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return *u, *tok
	}
	for _, c := range []struct {
		args    []string
		u, want string
	}{
		{nil, "http://127.0.0.1:8080", "askslack_pat_local"},
		{[]string{"--url", "https://askslack.example.com"}, "https://askslack.example.com", "askslack_pat_team"},
		{[]string{"--url", "https://nowhere.example.com"}, "https://nowhere.example.com", ""},
		{[]string{"--token", "given", "--url", "https://askslack.example.com"}, "https://askslack.example.com", "given"},
		{[]string{"--url", "https://askslack.example.com", "--token", "given"}, "https://askslack.example.com", "given"},
	} {
		if u, tok := parse(c.args...); u != c.u || tok != c.want {
			t.Errorf("%v: url %q token %q; want %q %q", c.args, u, tok, c.u, c.want)
		}
	}
	t.Setenv("ASKSLACK_TOKEN", "from-env")
	if _, tok := parse("--url", "https://askslack.example.com"); tok != "from-env" {
		t.Errorf("ASKSLACK_TOKEN set: token %q, want it over the stored one", tok)
	}
	// -help never prints a secret.
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	ClientFlags(fs)
	fs.PrintDefaults()
	if strings.Contains(out.String(), "from-env") || strings.Contains(out.String(), "askslack_pat_") {
		t.Fatalf("-help shows a token: %s", out.String())
	}
	if ok, _, err := RemoveCredential("https://askslack.example.com"); !ok || err != nil {
		t.Fatalf("RemoveCredential = %v, %v", ok, err)
	}
	if StoredToken("https://askslack.example.com") != "" || StoredToken("http://127.0.0.1:8080") != "askslack_pat_local" {
		t.Fatal("removing one bot's credential touched another's, or kept its own")
	}
}
