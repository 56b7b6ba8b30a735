package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layout's arrows, checked from `go list` so a change that breaks one
// fails here rather than in a reviewer's head (README, Layout).
func TestLayoutDependencies(t *testing.T) {
	t.Parallel()
	const mod = "github.com/askslack/askslack/"
	imports := goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+"...")
	importers := func(prefix string) []string {
		var out []string
		for pkg, imps := range imports {
			if slices.ContainsFunc(imps, func(i string) bool { return strings.HasPrefix(i, prefix) }) {
				out = append(out, strings.TrimPrefix(pkg, mod))
			}
		}
		slices.Sort(out)
		return out
	}
	// Only the Slack packages link slack-go: the Block Kit renderer (types
	// only), the Slack surface, and the binary's Slack glue. The domain
	// computes what a message shows (waterfall.View), so another surface
	// renders without it.
	if got, want := importers("github.com/slack-go/"), []string{"blocks", "cmd/askslack", "slackbot"}; !slices.Equal(got, want) {
		t.Errorf("packages importing slack-go: %v; want %v", got, want)
	}
	if got, want := importers("github.com/redis/go-redis/"), []string{"cmd/askslack", "internal/loadbench", "internal/kit/testredis", "store/redisstore"}; !slices.Equal(got, want) {
		t.Errorf("packages importing go-redis: %v; want %v", got, want)
	}
	// The Slack surface reads records from the domain, never the store.
	for _, imp := range imports[mod+"slackbot"] {
		if strings.HasPrefix(imp, mod+"store") {
			t.Errorf("slackbot imports %s; it reads waterfall.Record", imp)
		}
	}
	// The domain and the store-side services link neither client.
	for _, pkg := range []string{"waterfall", "waterfall/hostapi", "store", "mirror", "claims", "remind", "internal/startstop", "internal/workpool", "internal/clock"} {
		deps := goList(t, "-deps", "-f", "{{.ImportPath}}", mod+pkg)
		for dep := range deps {
			if strings.HasPrefix(dep, "github.com/slack-go/") || strings.HasPrefix(dep, "github.com/redis/go-redis/") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}

// goList runs `go list` and returns each line's first word with the rest.
func goList(t *testing.T, args ...string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	return m
}
