package docs

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/askslack/askslack/"

// rings places every package of the module in the layout of
// architecture.md: a package imports only packages of a lower ring, so
// every arrow points inward and none runs back up. A new package gets a
// ring here and a row on the page.
var rings = map[string]int{
	// Leaves: the record of an ask, the rule grammar, the production
	// parts every service shares, and the test kit.
	"asktype": 0, "rules": 0, "workspace": 0,
	"internal/clock": 0, "internal/startstop": 0, "internal/workpool": 0, "internal/heapfloor": 0,
	"internal/slacklimits": 0, "internal/blockcheck": 0, "internal/mdparse": 0, "internal/pagerfake": 0, "internal/backoff": 0,
	"internal/kit/modelapi": 0, "internal/kit/realagent": 0, "internal/kit/testredis": 0, "internal/kit/browser": 0, "internal/kit/clientrun": 0,
	"docs": 0, "deploy": 0, "deploy/healthcheck": 0, "clients/typescript": 0, "clients/python": 0,
	// The domain, and the store contract.
	"waterfall": 1, "store": 1, "internal/pace": 1, "internal/archetype": 1, "internal/mdhtml": 1,
	// What runs asks over the store, and what renders them.
	"engine": 2, "tokens": 2, "installs": 2, "claims": 2, "mirror": 2, "remind": 2, "pager": 2, "webhook": 2, "store/redisstore": 2, "store/storetest": 2,
	"blocks": 2, "internal/slackfake": 2, "internal/loadbench": 2,
	// The surfaces: Slack, the HTTP API, the answer page, the playground's page.
	"slackbot": 3, "hostapi": 3, "internal/playground": 3, "web": 3, "internal/slackfake/cmd/fakeslack": 3,
	// The binary: what its commands share, the service, the commands, main.
	"cmd/askslack/internal/cli": 4, "cmd/askslack/internal/hook": 4,
	"cmd/askslack/internal/service": 5, "cmd/askslack/internal/askcmd": 5, "cmd/askslack/internal/audit": 5,
	"cmd/askslack/internal/bench": 5, "cmd/askslack/internal/hookcmd": 5, "cmd/askslack/internal/mcpserver": 5,
	"cmd/askslack/internal/render": 5, "cmd/askslack/internal/webhooks": 5, "cmd/askslack/internal/login": 5,
	"cmd/askslack/internal/try": 6,
	"cmd/askslack":              7,
}

// The layout's arrows, checked from `go list` so a change that breaks one
// fails here rather than in a reviewer's head (architecture.md).
func TestLayout(t *testing.T) {
	t.Parallel()
	type pkg struct {
		imports, testImports []string
	}
	pkgs := map[string]pkg{}
	for _, line := range goList(t, "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", mod+"...") {
		f := strings.Split(line, "|")
		path := strings.TrimPrefix(f[0], mod)
		if strings.HasPrefix(path, "tmpprobe") {
			continue // a scratch folder some checkouts keep, never committed
		}
		pkgs[path] = pkg{strings.Fields(f[1]), strings.Fields(f[2])}
	}
	page, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for path, p := range pkgs {
		ring, ok := rings[path]
		if !ok {
			t.Errorf("%s has no ring in layout_test.go: place it in the layout (and on architecture.md)", path)
			continue
		}
		if !strings.Contains(string(page), "`"+path+"`") && !strings.Contains(string(page), "`"+path+"/`") {
			t.Errorf("architecture.md says nothing of `%s`", path)
		}
		for _, imp := range p.imports {
			dep, ours := strings.CutPrefix(imp, mod)
			if !ours {
				continue
			}
			if strings.HasPrefix(dep, "internal/kit/") {
				t.Errorf("%s imports the test kit %s outside its tests", path, dep)
			}
			if r, ok := rings[dep]; ok && r >= ring {
				t.Errorf("%s (ring %d) imports %s (ring %d): an arrow runs back up", path, ring, dep, r)
			}
		}
	}
	for path := range rings {
		if _, ok := pkgs[path]; !ok {
			t.Errorf("layout_test.go places %s, which is no package any more", path)
		}
	}

	// The Slack side knows no store: it reads domain records and asks the
	// engine through interfaces of its own.
	for _, dep := range goList(t, "-deps", mod+"slackbot", mod+"blocks") {
		if d := strings.TrimPrefix(dep, mod); strings.HasPrefix(d, "store") || d == "engine" {
			t.Errorf("slackbot or blocks depends on %s", d)
		}
	}
	importers := func(prefix string) []string {
		var out []string
		for path, p := range pkgs {
			if slices.ContainsFunc(p.imports, func(i string) bool { return strings.HasPrefix(i, prefix) }) {
				out = append(out, path)
			}
		}
		slices.Sort(out)
		return out
	}
	// Only the Slack packages link slack-go: the Block Kit renderer, the
	// Slack surface, the service that wires them, and render (which prints
	// Block Kit). The domain computes what a message shows
	// (waterfall.View), so another surface renders without it.
	if got, want := importers("github.com/slack-go/"), []string{"blocks", "cmd/askslack/internal/render", "cmd/askslack/internal/service", "slackbot"}; !slices.Equal(got, want) {
		t.Errorf("packages importing slack-go: %v; want %v", got, want)
	}
	if got, want := importers("github.com/redis/go-redis/"), []string{"cmd/askslack/internal/service", "internal/kit/testredis", "internal/loadbench", "store/redisstore"}; !slices.Equal(got, want) {
		t.Errorf("packages importing go-redis: %v; want %v", got, want)
	}
	// The domain and the store-side services link neither client.
	// Nor does the answer page: it asks the engine and keeps sessions
	// through interfaces of its own.
	for _, path := range []string{"asktype", "waterfall", "engine", "hostapi", "store", "mirror", "claims", "remind", "internal/startstop", "internal/workpool", "internal/clock", "web", "internal/mdparse", "internal/mdhtml", "pager", "internal/pagerfake", "webhook"} {
		for _, dep := range goList(t, "-deps", mod+path) {
			if strings.HasPrefix(dep, "github.com/slack-go/") || strings.HasPrefix(dep, "github.com/redis/go-redis/") {
				t.Errorf("%s links %s", path, dep)
			}
		}
	}
}

// goList runs `go list` in the module and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}
