package blocks

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/waterfall"
)

// Who asked is the API caller's name next to the agent id the agent chose;
// an answer through an answer surface names the surface, and what it says
// of who answered only as its claim (issue 21).
func TestCallerAndSurfaceAreShown(t *testing.T) {
	req := &waterfall.Request{CallID: "c1", Caller: "alice-laptop", Agent: waterfall.Agent{ID: "claude-code"},
		Questions: []waterfall.Question{{ID: "q", Question: "Deploy?", Options: []waterfall.Option{{Label: "Yes"}, {Label: "No"}}}}}
	v := waterfall.View{CallID: "c1", Request: req, Phase: waterfall.PhaseOpen, Now: time.Now()}
	raw, _ := json.Marshal(Question(v).Blocks)
	if !strings.Contains(string(raw), "*claude-code* · `alice-laptop`") {
		t.Fatalf("the question does not name its caller: %s", raw)
	}
	v.Phase = waterfall.PhaseSettled
	v.Settlement = &waterfall.Settlement{
		Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q", Selected: []string{"Yes"}}}},
		Respondent: waterfall.Respondent{Surface: waterfall.SurfaceAPI, UserName: "console", At: time.Now(),
			Claim: &waterfall.Claimant{UserID: "U0ALICE", UserName: "<@U0BOSS> alice"}},
	}
	m := Answered(v)
	raw, _ = json.Marshal(m.Blocks)
	s := string(raw)
	if !strings.Contains(s, "via *console*") || strings.Contains(s, "<@U0BOSS>") || strings.Contains(s, "<@U0ALICE>") {
		t.Fatalf("the answered message must name the surface and show the claim as plain text: %s", s)
	}
	if !strings.Contains(m.Text, "via console") {
		t.Fatalf("fallback text %q does not name the surface", m.Text)
	}
}
