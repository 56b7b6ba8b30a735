package blocks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askslack/askslack/waterfall"
)

// TestEditedAllowFitsSlack: the answered message of an edit of the
// largest values, in the characters escaping makes longest (& < >), stays
// within Slack's limits and still shows what runs; the form keeps a value
// with line breaks in a text area.
func TestEditedAllowFitsSlack(t *testing.T) {
	t.Parallel()
	for name, vals := range map[string][2]string{
		"angles":    {strings.Repeat("<", waterfall.MaxEditLen), strings.Repeat(">", waterfall.MaxEditLen)},
		"ampersand": {strings.Repeat("a && b\n", 500)[:waterfall.MaxEditLen], strings.Repeat("c && d\n", 500)[:waterfall.MaxEditLen]},
		"mentions":  {"ls", "<!channel> <@U0BOSS> ```x``` \u202e"},
	} {
		req := request(waterfall.Question{ID: waterfall.PermissionQuestionID, Question: "Allow Bash?", Options: opts("Allow", "Deny")})
		fields := []waterfall.EditableField{{Name: "command", Value: vals[0]}, {Name: "content", Value: vals[0]}, {Name: "a", Value: vals[0]}, {Name: "b", Value: vals[0]}}
		req.Permission = &waterfall.Permission{Tool: "Bash", Editable: fields}
		edited := map[string]string{}
		for _, f := range fields {
			edited[f.Name] = vals[1]
		}
		v := view(req)
		v.Phase = waterfall.PhaseSettled
		v.Settlement = &waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: waterfall.PermissionQuestionID,
			Selected: []string{"Allow"}, Edited: edited}}}, Respondent: waterfall.Respondent{UserID: "U0ALICE", UserName: "alice", Surface: waterfall.SurfaceSlack}}
		m := Answered(v)
		checkMessage(t, name, m)
		b, _ := json.Marshal(m.Blocks)
		raw := string(b)
		if !strings.Contains(raw, `\n+ `) {
			t.Errorf("%s: the answered message does not show what runs", name)
		}
		if strings.Contains(raw, "<!channel>") || strings.Contains(raw, "<@U0BOSS>") {
			t.Errorf("%s: a mention in an edit reaches Slack: %s", name, raw)
		}
		checkView(t, name+" form", EditModal(view(req), Meta{CallID: req.CallID}))
	}
	req := request(waterfall.Question{ID: waterfall.PermissionQuestionID, Question: "Allow?", Options: opts("Allow", "Deny")})
	req.Permission = &waterfall.Permission{Tool: "Bash", Editable: []waterfall.EditableField{{Name: "command", Value: "a\nb"}}}
	if raw, _ := json.Marshal(EditModal(view(req), Meta{CallID: req.CallID})); !strings.Contains(string(raw), `"multiline":true`) {
		t.Errorf("a value with a line break in a one-line input: %s", raw)
	}
}
