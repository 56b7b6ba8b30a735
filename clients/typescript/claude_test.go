package typescript

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/kit/clientrun"
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
	needNode(t)
	bash := map[string]any{"command": "touch askslack-ran && ls", "description": "Make a file"}
	deploy := map[string]any{"command": "touch deployed && ls", "description": "Deploy"}
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
		"edit":      {modelapi.Call("Bash", bash), modelapi.Say("done", true)},
		"deny":      {modelapi.Call("Bash", map[string]any{"command": "rm -rf build", "description": "Delete the build"}), modelapi.Say("done", true)},
		"question":  {question(), modelapi.Say("done", true)},
		"question2": {question(), modelapi.Say("done", true)},
		// Resumed after a late Allow, the model makes the same call again…
		"late": {modelapi.Call("Bash", deploy), modelapi.Say("waiting", true), modelapi.Call("Bash", deploy), modelapi.Say("resumed", true)},
		// …or a different one, which still asks.
		"lateother": {modelapi.Call("Bash", deploy), modelapi.Say("waiting", true),
			modelapi.Call("Bash", map[string]any{"command": "touch deployed-prod && ls", "description": "Deploy to production"}), modelapi.Say("resumed", true)},
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

	root := clientrun.Root(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	env := clientrun.Binaries(t, ctx, root)
	install(t, ctx)
	clientrun.Run(t, ctx, ".", nil, "npm", "run", "build")
	clientrun.Run(t, ctx, ".", append(env, "ASKSLACK_CLAUDE_MODELS="+string(models)),
		"node", "--test", "--test-reporter=spec", "dist/test/claude-agent-sdk.test.js")
}
