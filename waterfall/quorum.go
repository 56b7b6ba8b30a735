package waterfall

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Quorum: how many distinct people must approve a plan or a tool
// permission before the agent gets its answer. ASKSLACK_QUORUM sets the
// floor per kind (QuorumConfig); an ask may raise it ("approvals") and
// narrow who counts ("approvers"). The Host fixes the count when it stores
// the ask (Request.Quorum), and the Quorum policy decides each vote on the
// settlement seam (settle.go): a person votes once, any decline settles
// the ask declined at once, and the vote that reaches the count settles it
// approved, with every approver named (Settlement.Approvers).

// Limits of the quorum fields.
const (
	MaxApprovals = 10
	MaxApprovers = 50
)

// QuorumConfig is ASKSLACK_QUORUM parsed: approvals needed per kind, and
// per tool (optionally with a command pattern) for permissions.
type QuorumConfig struct {
	Plan       int
	Permission int
	Tools      []ToolQuorum
}

// ToolQuorum is one "permission:Tool(pattern)=N" entry. Pattern "" covers
// every use of the tool.
type ToolQuorum struct {
	Tool, Pattern string
	N             int
}

var quorumEntry = regexp.MustCompile(`^(plan|permission)(?::([A-Za-z0-9_.:-]+)(?:\((.+)\))?)?=([0-9]+)$`)

// ParseQuorum reads ASKSLACK_QUORUM: comma-separated entries "plan=N",
// "permission=N", "permission:Tool=N" and "permission:Tool(pattern)=N",
// where pattern is a command glob in which * matches any run of
// characters (e.g. "Bash(kubectl apply *)=2"). N is 1 to MaxApprovals.
func ParseQuorum(s string) (QuorumConfig, error) {
	var c QuorumConfig
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		m := quorumEntry.FindStringSubmatch(e)
		if m == nil {
			return c, fmt.Errorf("ASKSLACK_QUORUM: %q is not kind=N, with kind plan, permission or permission:Tool(command pattern), e.g. plan=2,permission:Bash(terraform apply*)=2", e)
		}
		n, err := strconv.Atoi(m[4])
		if err != nil || n < 1 || n > MaxApprovals {
			return c, fmt.Errorf("ASKSLACK_QUORUM: %q: the count must be 1 to %d", e, MaxApprovals)
		}
		switch {
		case m[1] == "plan" && m[2] != "":
			return c, fmt.Errorf("ASKSLACK_QUORUM: %q: only permissions name a tool", e)
		case m[1] == "plan":
			c.Plan = n
		case m[2] == "":
			c.Permission = n
		default:
			c.Tools = append(c.Tools, ToolQuorum{Tool: m[2], Pattern: strings.TrimSpace(m[3]), N: n})
		}
	}
	return c, nil
}

// RequiredApprovals is how many distinct people must approve req: the
// configured floor for its kind (and, for a permission, for its tool and
// command), raised by req.Approvals. It is 1 for an ask that takes the
// first answer: every question, and plans and permissions nothing raises.
// A caller deciding whether one answer may settle an ask (a standing
// rule) must not answer one that needs more than 1.
func RequiredApprovals(req *Request, q QuorumConfig) int {
	n := 1
	switch req.Kind() {
	case KindPlan:
		n = max(n, q.Plan)
	case KindPermission:
		n = max(n, q.Permission)
		tool, command := permissionAbout(req)
		for _, t := range q.Tools {
			if t.Tool == tool && (t.Pattern == "" || command == "" || commandMatches(t.Pattern, command)) {
				n = max(n, t.N)
			}
		}
	default:
		return 1
	}
	return max(n, req.Approvals)
}

// permissionAbout is the tool a permission ask is about and the command it
// runs, from its permission field (askslack hook fills it), else the tool
// from the header of its question and "" for the command. A command pattern covers an ask whose
// command is unknown: quorum errs toward more approvals.
func permissionAbout(req *Request) (tool, command string) {
	if p := req.Permission; p != nil {
		return p.Tool, p.Command
	}
	for i := range req.Questions {
		if q := &req.Questions[i]; q.ID == PermissionQuestionID {
			return q.Header, ""
		}
	}
	return "", ""
}

// commandMatches reports whether pattern (a glob: * matches any run of
// characters) matches the command or any command of a chain in it (split
// at ; && || | and newlines), so a chain cannot hide a command that needs
// a quorum behind a harmless one.
func commandMatches(pattern, command string) bool {
	parts := []string{command}
	parts = append(parts, strings.FieldsFunc(strings.NewReplacer("&&", ";", "||", ";", "|", ";", "\n", ";").Replace(command),
		func(r rune) bool { return r == ';' })...)
	for _, p := range parts {
		if globMatch(pattern, strings.Join(strings.Fields(p), " ")) {
			return true
		}
	}
	return false
}

// globMatch matches s against pattern, where * is any run of characters
// and every other character is literal.
func globMatch(pattern, s string) bool {
	lit := strings.Split(pattern, "*")
	if len(lit) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, lit[0]) {
		return false
	}
	s = s[len(lit[0]):]
	for _, l := range lit[1 : len(lit)-1] {
		i := strings.Index(s, l)
		if i < 0 {
			return false
		}
		s = s[i+len(l):]
	}
	return strings.HasSuffix(s, lit[len(lit)-1])
}

// validateQuorum checks the quorum fields of r.
func validateQuorum(r *Request) error {
	if r.Approvals < 0 || r.Approvals > MaxApprovals {
		return Errorf(CodeBadRequest, "approvals must be 1 to %d", MaxApprovals)
	}
	kind := r.Kind()
	if (r.Approvals > 1 || len(r.Approvers) > 0) && kind != KindPlan && kind != KindPermission {
		return Errorf(CodeBadRequest, "approvals and approvers apply to plans and tool permissions only: a question takes the first answer")
	}
	if len(r.Approvers) > MaxApprovers {
		return Errorf(CodeBadRequest, "at most %d approvers", MaxApprovers)
	}
	for _, id := range r.Approvers {
		if !slackID(id) {
			return Errorf(CodeBadRequest, "approvers must be Slack user ids (U…, W…) or user group ids (S…), not %q", id)
		}
	}
	return nil
}

// slackID reports whether id looks like a Slack user or user group id.
func slackID(id string) bool {
	if len(id) < 3 || len(id) > 32 || !strings.ContainsRune("UWS", rune(id[0])) {
		return false
	}
	for _, c := range id[1:] {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Approves reports whether ans approves what req asks: a plan review's
// approve option (Question.Approves) on every plan question, or a tool
// permission's Allow (or Always allow) with no typed text. Anything else
// declines.
func Approves(req *Request, ans Answer) bool {
	found := false
	for i := range req.Questions {
		q := &req.Questions[i]
		switch {
		case q.PlanReview():
			if !q.Approves(ans.Item(q.ID)) {
				return false
			}
			found = true
		case q.ID == PermissionQuestionID:
			it := ans.Item(q.ID)
			if it == nil || it.Custom != "" || len(it.Selected) != 1 || !AllowsPermission(it.Selected[0]) {
				return false
			}
			found = true
		}
	}
	return found
}

// Votes is where a quorum ask's vote stands: the view renderers and
// reminders need.
type Votes struct {
	// Need is how many approvals the ask needs (Request.Quorum; 0 or 1
	// for an ask that takes the first answer).
	Need int
	// Approved are the people who approved so far, in order.
	Approved []Respondent
	// Approvers are the ids the ask narrowed its approvers to.
	Approvers []string
}

// Quorum reports whether the ask needs more than one approval.
func (t Votes) Quorum() bool { return t.Need > 1 }

// Missing is how many approvals are still needed.
func (t Votes) Missing() int { return max(0, t.Need-len(t.Approved)) }

// Waiting lists the named approvers (user ids) who have not approved yet;
// group ids stay in the list, since any member of the group may approve.
func (t Votes) Waiting() []string {
	var out []string
	for _, id := range t.Approvers {
		voted := slices.ContainsFunc(t.Approved, func(r Respondent) bool { return r.SlackUser() == id })
		if !voted {
			out = append(out, id)
		}
	}
	return out
}

// VotesOf is where the vote on a stored ask stands.
func VotesOf(r *Record) Votes {
	t := Votes{Need: r.Request.Quorum, Approvers: r.Request.Approvers}
	if !t.Quorum() {
		return t
	}
	votes, err := Ballots(r.Ask)
	if err != nil {
		return t
	}
	for _, v := range votes {
		if Approves(r.Request, v.Answer) {
			t.Approved = append(t.Approved, v.Respondent)
		}
	}
	return t
}

// QuorumPolicy is the settlement policy of quorum asks (Request.Quorum >
// 1); any other ask takes the first answer, as FirstAnswer. Only the
// named approvers count when the ask names them; a Slack user's group
// membership is checked by the surface before it answers (slackbot), so
// the policy admits a Slack user when the ask names any group.
type QuorumPolicy struct{}

// Decide implements Policy.
func (QuorumPolicy) Decide(rec *Record, votes []Ballot, s Settlement) Decision {
	req := rec.Request
	if len(req.Approvers) > 0 && !mayApprove(req.Approvers, s.Respondent) {
		return Decision{Refuse: Errorf(CodeForbidden, "Only the approvers this ask names may answer it.")}
	}
	need := req.Quorum
	if need <= 1 {
		return FirstAnswer{}.Decide(rec, votes, s)
	}
	voter := VoterOf(s.Respondent)
	var approvers []Respondent
	for _, v := range votes {
		if v.Voter == voter {
			return Decision{Refuse: Errorf(CodeForbidden, "You already approved this; it needs %s.", more(need-len(votes)))}
		}
		approvers = append(approvers, v.Respondent)
	}
	who := plainWho(s.Respondent)
	if !Approves(req, s.Answer) {
		return Decision{Settle: true, Settlement: s, Detail: fmt.Sprintf("declined by %s after %d of %d approvals", who, len(votes), need)}
	}
	approvers = append(approvers, s.Respondent)
	if len(approvers) < need {
		return Decision{Detail: fmt.Sprintf("approved by %s; %d of %d", who, len(approvers), need)}
	}
	s.Approvers = approvers
	return Decision{Settle: true, Settlement: s, Detail: "approved by " + names(approvers) + fmt.Sprintf(" (%d of %d)", need, need)}
}

// mayApprove reports whether the respondent is one of approvers: a Slack
// user listed by id, or any Slack user when a group is listed (the surface
// checked the membership), in Slack or on the answer page signed in with
// Slack. An answer surface is never a named approver.
func mayApprove(approvers []string, r Respondent) bool {
	user := r.SlackUser()
	if user == "" {
		return false
	}
	for _, id := range approvers {
		if id == user || strings.HasPrefix(id, "S") {
			return true
		}
	}
	return false
}

func more(n int) string {
	if n == 1 {
		return "one more approval"
	}
	return strconv.Itoa(n) + " more approvals"
}

// plainWho names a respondent in plain text.
func plainWho(r Respondent) string {
	switch {
	case r.UserName != "":
		return r.UserName
	case r.UserID != "":
		return r.UserID
	}
	return r.Surface
}

// names lists respondents in plain text: "alice", "alice and bob",
// "alice, bob and carol".
func names(rs []Respondent) string {
	ns := make([]string, len(rs))
	for i, r := range rs {
		ns[i] = plainWho(r)
	}
	if len(ns) <= 1 {
		return strings.Join(ns, "")
	}
	return strings.Join(ns[:len(ns)-1], ", ") + " and " + ns[len(ns)-1]
}

// ApproverNames lists who approved s in plain text ("alice and bob"), or
// "" when it settled without a quorum.
func ApproverNames(s *Settlement) string {
	if s == nil || len(s.Approvers) < 2 {
		return ""
	}
	return names(s.Approvers)
}
