package webhook_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/webhook"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// The audit trail names commands and paths in full (operators read it); a
// webhook body built from the same entries names them by SHA-256 only.
// The details are made by the code that writes them to the trail, so a
// change of their shape shows here.
func TestBodyCarriesNoToolInput(t *testing.T) {
	const secret = "s3cret-REDACT"
	old := "psql --password=" + secret + " -c 'vacuum'"
	// The edit's new text holds a secret of its own, and a line shaped
	// like the detail's field header.
	new := "psql -c 'vacuum analyze' # " + secret + "-new\ncommand (new value sha256:" + strings.Repeat("a", 64) + "):"
	field := waterfall.EditableField{Name: "command", Value: old, Of: waterfall.OfCommand}
	req := &waterfall.Request{Permission: &waterfall.Permission{Tool: "Bash", Command: old, Editable: []waterfall.EditableField{field}}}
	edits := waterfall.EditDetail(waterfall.Changes(req, &waterfall.AnswerItem{Edited: map[string]string{"command": new}}), 4000)
	if !strings.Contains(edits, secret) {
		t.Fatalf("the trail's detail lost the diff (this test needs it there): %s", edits)
	}

	rule := asktype.Rule{ID: 7, Effect: "allow", Tool: "Bash", Command: old, Repo: "infra)x", Caller: "ci", GrantedBy: "U0ALICE", GrantedByName: "alice"}
	ref := waterfall.RuleRefOf(rule)
	settled, _ := json.Marshal(map[string]any{"respondent": map[string]any{"userId": "U0ALICE", "userName": ref.Name(time.Now()), "surface": "rule", "rule": ref}})
	_, byRule := store.AuditRespondentOf(settled)
	if !strings.Contains(byRule, secret) {
		t.Fatalf("the trail's rule answer lost the rule (this test needs it there): %s", byRule)
	}

	at := time.Now().UTC()
	for _, c := range []struct {
		event, detail string
		want          []string // in the body's detail
	}{
		{asktype.EventAnswered, edits, []string{"allowed with changes\ncommand (new value sha256:" + sum(new) + ")"}},
		{asktype.EventAnswered, "on behalf of bob (U0BOB); " + edits, []string{"on behalf of bob (U0BOB); allowed with changes\ncommand (new value sha256:" + sum(new) + "):"}},
		{asktype.EventQueued, edits, []string{"command (new value sha256:" + sum(new) + "):"}},
		{asktype.EventAnswered, byRule, []string{"by standing rule 7: allow Bash(sha256:" + sum(old) + "), granted by alice (U0ALICE)"}},
		{asktype.EventRuleGranted, waterfall.RuleDetail(rule), []string{"rule 7: allow Bash(sha256:", "for caller ci, until revoked"}},
		{asktype.EventRuleRevoked, waterfall.RuleDetail(asktype.Rule{ID: 8, Effect: "deny", Tool: "Edit", Path: "/srv/" + secret + "/*"}),
			[]string{"rule 8: deny Edit(sha256:" + sum("/srv/"+secret+"/*") + "), until revoked"}},
		{asktype.EventRuleGranted, waterfall.RuleDetail(asktype.Rule{ID: 9, Effect: "allow", Tool: "WebSearch"}), []string{"rule 9: allow WebSearch, until revoked"}},
	} {
		e := &asktype.AuditEntry{Seq: 1, At: at, CallID: "c1", Event: c.event, Detail: c.detail, Hash: "h"}
		b, ok := webhook.BodyOf("audit", e, nil)
		if !ok {
			t.Fatalf("%s: no body", c.event)
		}
		raw := string(b.Marshal())
		if strings.Contains(raw, secret) || strings.Contains(raw, "vacuum") {
			t.Errorf("%s: the body carries tool input: %s", c.event, raw)
		}
		for _, w := range c.want {
			if !strings.Contains(b.Detail, w) {
				t.Errorf("%s: detail %q lacks %q", c.event, b.Detail, w)
			}
		}
	}
}
