package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/waterfall"
)

func editableBash(id string) *waterfall.Request {
	return &waterfall.Request{CallID: id, Agent: waterfall.Agent{ID: "claude-code"}, Approvers: []string{alice.ID, bob.ID},
		Questions: []waterfall.Question{{ID: waterfall.PermissionQuestionID, Question: "Allow Bash?",
			Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}},
		Permission: &waterfall.Permission{Tool: "Bash", Command: "rm -rf build",
			Editable: []waterfall.EditableField{{Name: "command", Label: "Command", Value: "rm -rf build\necho done", Multiline: true}}}}
}

// TestEditAndAllowFromTheBrowser: the page offers the form prefilled;
// alice's edit (a textarea's CRLF read as LF) settles Allow with only the
// field she changed, and the page shows the diff. mallory, not an
// approver, gets no form and her forged edit is refused and audited; an
// edit of a field the ask does not list changes nothing; an ask whose
// agent takes no edit offers no form and refuses one.
func TestEditAndAllowFromTheBrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.open(editableBash("edit-1"))
	noEdit := editableBash("edit-2")
	noEdit.Permission.Editable = nil
	e.open(noEdit)

	m := e.browser()
	e.mustSignIn(m, mallory)
	forged := url.Values{"csrf": {csrfOf(t, m.get(e.base+"/app/"))}, "action": {"edit"}, "edit-command": {"rm -rf /"}}
	if p := m.post(e.base+"/app/asks/edit-1", forged); p.status != http.StatusNotFound {
		t.Fatalf("mallory's forged edit: %d %s", p.status, p.body)
	}
	entries, _, _ := e.host.Audit(context.Background(), asktype.AuditQuery{CallID: "edit-1"})
	if last := entries[len(entries)-1]; last.Event != asktype.EventRefused || last.Respondent == nil || last.Respondent.UserID != mallory.ID {
		t.Fatalf("mallory's refusal is not in the trail: %+v", last)
	}

	b := e.browser()
	e.mustSignIn(b, alice)
	if page := b.get(e.base + "/app/asks/edit-2"); strings.Contains(page.body, `id="edit-form"`) {
		t.Fatal("an ask whose agent takes no edit offers the form")
	} else if p := b.post(e.base+"/app/asks/edit-2", url.Values{"csrf": {csrfOf(t, page)}, "action": {"edit"}, "edit-command": {"ls"}}); p.status != http.StatusUnprocessableEntity {
		t.Fatalf("an edit of an ask that takes none: %d %s", p.status, p.body)
	}
	page := b.get(e.base + "/app/asks/edit-1")
	for _, want := range []string{`id="edit-form"`, `name="edit-command"`, ">\nrm -rf build\necho done</textarea>"} {
		if !strings.Contains(page.body, want) {
			t.Fatalf("the ask page lacks %q:\n%s", want, page.body)
		}
	}
	p := b.post(e.base+"/app/asks/edit-1", url.Values{"csrf": {csrfOf(t, page)}, "action": {"edit"},
		"edit-command": {"rm -rf build/tmp\r\necho done"}, "edit-timeout": {"1"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/app/asks/edit-1?m=answered" {
		t.Fatalf("alice's edit: %d %q %s", p.status, p.header.Get("Location"), p.body)
	}
	rec, _ := e.host.Get(context.Background(), "edit-1")
	it := rec.Settlement.Item(waterfall.PermissionQuestionID)
	if it.Selected[0] != "Allow" || len(it.Edited) != 1 || it.Edited["command"] != "rm -rf build/tmp\necho done" {
		t.Fatalf("settled with %+v", it)
	}
	after := b.get(e.base + p.header.Get("Location"))
	if !strings.Contains(after.body, "Allowed with changes by <strong>alice</strong>") || !strings.Contains(after.body, "- rm -rf build\n&#43; rm -rf build/tmp\n  echo done") {
		t.Fatalf("the page after the edit:\n%s", after.body)
	}
}

// TestRecallOnThePage: a question asked before says what was chosen.
func TestRecallOnThePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.host.UseMemory(engine.MemoryOptions{Notes: e.st, For: time.Hour}) // before any ask
	e.open(dbQuestion("recall-1"))
	b := e.browser()
	e.mustSignIn(b, alice)
	if p := b.post(e.base+"/app/asks/recall-1", url.Values{"csrf": {csrfOf(t, b.get(e.base+"/app/asks/recall-1"))}, "q0": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("answer: %d %s", p.status, p.body)
	}
	e.open(dbQuestion("recall-2"))
	page := b.get(e.base + "/app/asks/recall-2")
	if !strings.Contains(page.body, "Last time alice chose SQLite (just now).") {
		t.Fatalf("the page does not recall alice's answer:\n%s", page.body)
	}
	// SQLite (index 1) comes first and still sends its own index.
	if i, j := strings.Index(page.body, `value="1" data-label="SQLite"`), strings.Index(page.body, `value="0" data-label="PostgreSQL"`); i < 0 || j < 0 || i > j {
		t.Fatalf("SQLite is not offered first (%d, %d):\n%s", i, j, page.body)
	}
}
