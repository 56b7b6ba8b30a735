package typescript

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/kit/modelapi"
)

// TestClaudeAgentSDK runs the Claude Agent SDK adapter's tests
// (test/claude-agent-sdk.test.ts): the real SDK drives the Claude Code it
// ships, against the scripted Messages API the real-agent tests use, one
// scripted model per case, through the askslack binary and the fake Slack.
func TestClaudeAgentSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Claude Agent SDK's tests")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not on PATH (CI=true)", tool)
			}
			t.Skipf("%s not on PATH: skipping the Claude Agent SDK's tests", tool)
		}
	}
	bash := map[string]any{"command": "touch askslack-ran && ls", "description": "Make a file"}
	question := func() modelapi.Step {
		return modelapi.Call("AskUserQuestion", map[string]any{"questions": []any{map[string]any{
			"question": "Which database should the service use?", "header": "Database", "multiSelect": false,
			"options": []any{
				map[string]any{"label": "PostgreSQL", "description": "the team's usual"},
				map[string]any{"label": "SQLite", "description": "one file, no server"},
			},
		}}})
	}
	scripts := map[string][]modelapi.Step{
		"allow":     {modelapi.Call("Bash", bash), modelapi.Say("done", true)},
		"deny":      {modelapi.Call("Bash", map[string]any{"command": "rm -rf build", "description": "Delete the build"}), modelapi.Say("done", true)},
		"question":  {question(), modelapi.Say("done", true)},
		"question2": {question(), modelapi.Say("done", true)},
		"late":      {modelapi.Call("Bash", map[string]any{"command": "touch deployed && ls", "description": "Deploy"}), modelapi.Say("waiting", true), modelapi.Say("resumed", false)},
	}
	urls := map[string]string{}
	for name, script := range scripts {
		m := modelapi.New(script...)
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		urls[name] = m.URL()
		defer func(name string, m *modelapi.Server) {
			if t.Failed() {
				t.Logf("model %s saw:\n%v", name, m.Log())
			}
		}(name, m)
	}
	models, _ := json.Marshal(urls)

	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "..", "..")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bin := t.TempDir()
	for _, b := range []struct{ out, pkg string }{
		{"askslack", "./cmd/askslack"},
		{"fakeslack", "./internal/slackfake/cmd/fakeslack"},
	} {
		run(t, ctx, root, nil, goBinary(), "build", "-o", filepath.Join(bin, b.out), b.pkg)
	}
	if needsInstall(dir) {
		run(t, ctx, dir, nil, "npm", "ci", "--no-audit", "--no-fund")
	}
	run(t, ctx, dir, nil, "npm", "run", "build")
	run(t, ctx, dir, []string{
		"ASKSLACK_BIN=" + filepath.Join(bin, "askslack"),
		"FAKESLACK_BIN=" + filepath.Join(bin, "fakeslack"),
		"ASKSLACK_CLAUDE_MODELS=" + string(models),
	}, "node", "--test", "--test-reporter=spec", "dist/test/claude-agent-sdk.test.js")
}
