package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/blockcheck"
)

// renderPlan is a plan review to render (as in internal/render's tests).
const renderPlan = `{"callId":"toolu_render","agent":{"id":"claude","sessionId":"s-1","principal":"alice@example.com","sourceTaskId":"t-1"},"timeoutMs":600000,
 "questions":[{"id":"plan","question":"Approve the migration plan?","detail":"## Steps\n- **Back up** the table\n- Run ` + "`migrate`" + `\n","header":"Plan",
   "options":[{"label":"Approve"},{"label":"Revise"}],"intent":{"kind":"plan-review","approve":"Approve"}}]}`

// TestRenderCommandBinary runs the real binary (built by TestMain):
// `askslack render < request.json` on stdin, JSON on stdout, exit 0.
func TestRenderCommandBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "render", "--part", "message")
	cmd.Stdin = strings.NewReader(renderPlan)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("askslack render: %v\n%s", err, stderr.String())
	}
	var msg struct{ Blocks json.RawMessage }
	if err := json.Unmarshal(out, &msg); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := blockcheck.Message("text", msg.Blocks); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"Approve"`)) {
		t.Fatalf("no Approve button in %s", out)
	}
}
