package web

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/askslack/askslack/internal/mdhtml"
	"github.com/askslack/askslack/waterfall"
)

// scanAsks bounds how many active asks a listing reads (the Slack side's
// listings read as many).
const scanAsks = 200

// askView is one ask as the page shows it.
type askView struct {
	CallID, URL      string
	Title            string
	Kind             string
	Caller, Agent    string
	Asked, Deadline  time.Time
	Phase            string
	Active           bool
	Questions        []questionView
	Quorum           bool
	Need             int
	Approved         []string
	Answer           []answerLine
	AnsweredBy       string
	AnsweredVia      string
	Permission       *waterfall.Permission
	AnsweredElsewise string
	// Editable: the ask takes an edited input (Edit & allow); Changes, on
	// an allow with changes, say what changed.
	Editable bool
	Changes  []changeView
}

// changeView is one edited field as the page shows it: a line diff.
type changeView struct {
	Label, Diff string
}

type questionView struct {
	Index       int
	ID, Header  string
	Text        template.HTML
	Detail      template.HTML
	DetailBytes int
	Multi, Plan bool
	Options     []optionView
	// InTitle: the page's title already says the whole question.
	InTitle bool
	// Recall says what was chosen last time this question was asked
	// (answer memory); "" when nothing was.
	Recall string
}

type optionView struct {
	Index       int
	Label       string
	Description template.HTML
	Preview     template.HTML
	Approve     bool
}

type answerLine struct {
	Question string
	Chosen   string
}

// summaryOf is what a listing shows of r: its title and facts, no
// Markdown. A listing holds up to 200 asks an agent wrote; rendering each
// whole (a plan of megabytes) for a line would let one agent tie the bot up.
func summaryOf(r *waterfall.Record) askView {
	req := r.Request
	v := askView{CallID: r.CallID, URL: askPath(r.CallID), Title: title(req), Kind: req.Kind(), Caller: req.Caller,
		Agent: req.Agent.ID, Asked: r.Created, Deadline: r.Deadline, Phase: r.Phase.String(), Active: r.State.Active(), Permission: req.Permission}
	votes := waterfall.VotesOf(r)
	if votes.Quorum() {
		v.Quorum, v.Need = true, votes.Need
		for _, a := range votes.Approved {
			v.Approved = append(v.Approved, who(a))
		}
	}
	return v
}

// askPath is an ask's page, its id escaped.
func askPath(callID string) string { return Prefix + "asks/" + url.PathEscape(callID) }

// viewOf is what an ask's own page shows of r: the summary, and every
// question, plan, option and answer rendered.
func viewOf(r *waterfall.Record) askView {
	req := r.Request
	v := summaryOf(r)
	for qi, q := range req.Questions {
		qv := questionView{Index: qi, ID: q.ID, Header: q.Header, Text: mdhtml.Render(q.Question), Detail: mdhtml.Render(q.Detail),
			DetailBytes: len(q.Detail), Multi: q.MultiSelect, Plan: q.PlanReview(), InTitle: len(req.Questions) == 1 && title(req) == q.Question}
		rc := req.Recalled(q.ID)
		if !r.State.Active() || !req.Recalls() || !rc.Offered(&q) {
			rc = nil
		}
		for _, oi := range waterfall.RecalledFirst(&q, rc) {
			o := q.Options[oi]
			qv.Options = append(qv.Options, optionView{Index: oi, Label: o.Label, Description: mdhtml.Inline(o.Description),
				Preview: mdhtml.Render(o.Preview), Approve: q.PlanReview() && q.Intent != nil && q.Intent.Approve == o.Label})
		}
		if rc != nil {
			by := rc.By
			if rc.Via != "" {
				by += " (via " + rc.Via + ")"
			}
			qv.Recall = "Last time " + by + " chose " + strings.Join(rc.Selected, ", ") + " (" + ago(rc.At) + ")."
		}
		v.Questions = append(v.Questions, qv)
	}
	v.Editable = r.State.Active() && req.Editable()
	if s := r.Answered(); s != nil {
		v.AnsweredBy, v.AnsweredVia = who(s.Respondent), s.Respondent.Surface
		for _, c := range waterfall.Changes(req, s.Item(waterfall.PermissionQuestionID)) {
			v.Changes = append(v.Changes, changeView{Label: c.Label, Diff: waterfall.LineDiff(c.Old, c.New)})
		}
		for _, q := range req.Questions {
			if it := s.Item(q.ID); it != nil {
				chosen := strings.Join(it.Selected, ", ")
				if it.Custom != "" {
					chosen = strings.TrimPrefix(chosen+", “"+it.Custom+"”", ", ")
				}
				v.Answer = append(v.Answer, answerLine{Question: q.Question, Chosen: chosen})
			}
		}
	}
	switch {
	case r.Phase == waterfall.PhaseAborted && r.AnsweredElsewhere():
		v.AnsweredElsewise = "Answered in the agent's own terminal."
	case r.Phase == waterfall.PhaseAborted && r.Abandoned():
		v.AnsweredElsewise = "The agent stopped waiting."
	case r.TokenRevoked():
		v.AnsweredElsewise = "The agent's token was revoked; the question went with it."
	case r.Phase == waterfall.PhaseAborted:
		v.AnsweredElsewise = "The agent withdrew the question."
	}
	return v
}

// title is the line an ask is listed under.
func title(req *waterfall.Request) string {
	if len(req.Questions) == 0 {
		return "(no question)"
	}
	q := req.Questions[0]
	t := q.Question
	if q.Header != "" {
		t = q.Header + ": " + t
	}
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[:i]
	}
	if r := []rune(t); len(r) > 140 {
		t = string(r[:139]) + "…"
	}
	if n := len(req.Questions); n > 1 {
		t += " (+" + strconv.Itoa(n-1) + " more)"
	}
	return t
}

// who names a respondent for the page.
func who(r waterfall.Respondent) string {
	name := r.UserName
	if name == "" {
		name = r.UserID
	}
	if name == "" {
		name = r.Surface
	}
	return name
}

// answerable is the active asks user may answer, newest first: the
// Authorizer's, asked per ask as a click would be, failing closed.
func (s *Server) answerable(ctx context.Context, user string) ([]askView, error) {
	recs, err := s.host.Active(ctx, scanAsks)
	if err != nil {
		return nil, err
	}
	var out []askView
	for _, r := range recs {
		if ok, _ := s.authz.Allowed(ctx, user, r.Request); ok {
			out = append(out, summaryOf(r))
		}
	}
	return out, nil
}

type inboxPage struct {
	page
	Asks []askView
}

// inbox lists what the person may answer, live.
func (s *Server) inbox(w http.ResponseWriter, r *http.Request) {
	sess := s.signedIn(w, r)
	if sess == nil {
		return
	}
	asks, err := s.answerable(r.Context(), sess.User)
	if err != nil {
		s.log.Error("listing asks for the web failed", "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "The questions cannot be read just now; the page will try again.")
		return
	}
	s.render(w, r, http.StatusOK, "inbox", inboxPage{page: s.pageFor(sess, "Questions for you"), Asks: asks})
}

type askPageData struct {
	page
	Ask       askView
	CanAnswer bool
	Why       string
	Flash     string
	Error     string
}

// flashes are what a redirect after a POST tells (?m=…): a fixed set, so a
// link cannot make the page say anything else.
var flashes = map[string]string{
	"answered": "Your answer was sent to the agent.",
	"queued":   "The agent had stopped waiting: your answer is queued and reaches it as a new message.",
	"voted":    "Your approval is recorded; the ask waits for more approvals.",
	"taken":    "Someone answered first; their answer stands.",
	"revoked":  "The rule is revoked.",
	// The agent token's open asks were withdrawn with it.
	"token-revoked": "The agent token is revoked on every replica; its open questions are withdrawn.",
}

// askPage shows one ask: the whole question, plan and options, and the
// form to answer it when the person may. Anyone else learns nothing of it.
func (s *Server) askPage(w http.ResponseWriter, r *http.Request) {
	sess := s.signedIn(w, r)
	if sess == nil {
		return
	}
	rec, ok := s.readable(w, r, sess)
	if !ok {
		return
	}
	s.showAsk(w, r, sess, rec, http.StatusOK, flashes[r.URL.Query().Get("m")], "")
}

func (s *Server) showAsk(w http.ResponseWriter, r *http.Request, sess *session, rec *waterfall.Record, status int, flash, problem string) {
	ctx := r.Context()
	can, why := s.authz.Allowed(ctx, sess.User, rec.Request)
	d := askPageData{page: s.pageFor(sess, title(rec.Request)), Ask: viewOf(rec), CanAnswer: can && rec.State.Active(),
		Flash: flash, Error: problem}
	if !can {
		d.Why = why
	}
	w.Header().Set("X-Ask-Active", strconv.FormatBool(d.CanAnswer))
	s.render(w, r, status, "ask", d)
}

// readable loads the ask of the request's path when sess may see it: a
// person who may answer it, or an admin. Anyone else gets the page an
// unknown id gets, so the page says nothing of asks that are not theirs.
func (s *Server) readable(w http.ResponseWriter, r *http.Request, sess *session) (*waterfall.Record, bool) {
	id := r.PathValue("id")
	rec, err := s.host.Get(r.Context(), id)
	if err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeNotFound {
			s.fail(w, r, http.StatusNotFound, "There is no such question (or it is not yours to answer).")
			return nil, false
		}
		s.log.Error("reading an ask for the web failed", "callId", id, "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "The question cannot be read just now; try again in a minute.")
		return nil, false
	}
	if ok, _ := s.authz.Allowed(r.Context(), sess.User, rec.Request); !ok && !sess.Admin {
		s.fail(w, r, http.StatusNotFound, "There is no such question (or it is not yours to answer).")
		return nil, false
	}
	return rec, true
}

// answer takes an answer from the page through the Host, as a click would:
// the same Authorizer, the same atomic decision (the first answer wins
// against Slack and the agent's terminal), respondent the signed-in person,
// surface "web". A refusal is recorded in the audit trail.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	sess := s.signedIn(w, r)
	if sess == nil {
		return
	}
	if !s.checkPost(w, r, sess, r.PathValue("id")) {
		return
	}
	ctx := r.Context()
	id := r.PathValue("id")
	// Current, not Get: what follows decides against the stored ask.
	rec, err := s.host.Current(ctx, id)
	if err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeNotFound {
			s.fail(w, r, http.StatusNotFound, "There is no such question (or it is not yours to answer).")
			return
		}
		s.log.Error("reading an ask for a web answer failed", "callId", id, "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "The question cannot be read just now; nothing was sent. Try again in a minute.")
		return
	}
	who := sess.respondent(s.clock.Now())
	if ok, why := s.authz.Allowed(ctx, sess.User, rec.Request); !ok {
		// Recorded (the engine bounds refusals per person), and answered as
		// an unknown id is: the page says nothing of asks that are not theirs.
		s.m.Web("answer", "refused")
		s.host.Refused(ctx, waterfall.RefusedClick(rec, who, why))
		s.fail(w, r, http.StatusNotFound, "There is no such question (or it is not yours to answer).")
		return
	}
	if !rec.State.Active() {
		s.m.Web("answer", "duplicate")
		s.after(w, r, id, "taken")
		return
	}
	ans, any := waterfall.AnswerOf(rec.Request, picksOf(r, rec.Request))
	if r.PostFormValue("action") == "edit" {
		// Edit & allow: Allow, with the fields as the form holds them (the
		// Host keeps only what changed, and refuses what the ask does not
		// list).
		ans, any = editOf(r, rec.Request), true
	}
	if !any {
		s.m.Web("answer", "invalid")
		s.showAsk(w, r, sess, rec, http.StatusUnprocessableEntity, "", "Pick an option or type an answer first.")
		return
	}
	out, err := s.host.Answer(ctx, id, ans, who)
	s.m.Web("answer", answerResult(out, err))
	switch code := waterfall.CodeOf(err); {
	case err == nil && out.Voted:
		s.after(w, r, id, "voted")
	case err == nil && out.Queued:
		s.after(w, r, id, "queued")
	case err == nil:
		s.after(w, r, id, "answered")
	case code == waterfall.CodeAlreadySettled, code == waterfall.CodeReplyQueued, code == waterfall.CodeAskAborted:
		s.after(w, r, id, "taken")
	case code == waterfall.CodeBadAnswer, code == waterfall.CodeForbidden:
		s.showAsk(w, r, sess, rec, http.StatusUnprocessableEntity, "", "That answer was not taken: "+err.Error())
	default:
		s.log.Error("a web answer failed", "callId", id, "err", err)
		s.fail(w, r, http.StatusServiceUnavailable, "Your answer could not be sent just now; try again in a minute.")
	}
}

// answerResult labels an answer's outcome as the Slack clicks' are.
func answerResult(out waterfall.Outcome, err error) string {
	switch code := waterfall.CodeOf(err); {
	case err == nil && out.Voted:
		return "voted"
	case err == nil && out.Queued:
		return "queued"
	case err == nil:
		return "settled"
	case code == waterfall.CodeAlreadySettled, code == waterfall.CodeReplyQueued, code == waterfall.CodeAskAborted:
		return "duplicate"
	case code == waterfall.CodeBadAnswer:
		return "invalid"
	case code == waterfall.CodeForbidden:
		return "refused"
	}
	return "error"
}

// after redirects to the ask's page with what became of the POST (no
// resubmission on reload).
func (s *Server) after(w http.ResponseWriter, r *http.Request, id, flash string) {
	http.Redirect(w, r, Prefix+"asks/"+url.PathEscape(id)+"?m="+flash, http.StatusSeeOther)
}

// editOf is the Edit & allow form's answer: Allow, with edit-<name> for
// each field the ask lists as editable.
func editOf(r *http.Request, req *waterfall.Request) waterfall.Answer {
	edited := map[string]string{}
	if req.Permission != nil {
		for _, f := range req.Permission.Editable {
			if v, ok := r.PostForm["edit-"+f.Name]; ok && len(v) == 1 {
				// Browsers send a textarea's line breaks as CRLF.
				edited[f.Name] = strings.ReplaceAll(v[0], "\r\n", "\n")
			}
		}
	}
	return waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: waterfall.PermissionQuestionID,
		Selected: []string{waterfall.PermissionAllow}, Edited: edited}}}
}

// picksOf reads the form: q<i> holds the index of each option chosen for
// question i (the labels are the ask's, never the browser's), q<i>-other
// the typed text.
func picksOf(r *http.Request, req *waterfall.Request) []waterfall.Picked {
	picks := make([]waterfall.Picked, len(req.Questions))
	for qi, q := range req.Questions {
		key := "q" + strconv.Itoa(qi)
		seen := map[int]bool{}
		for _, raw := range r.PostForm[key] {
			oi, err := strconv.Atoi(raw)
			if err != nil || oi < 0 || oi >= len(q.Options) || seen[oi] {
				continue
			}
			seen[oi] = true
			picks[qi].Selected = append(picks[qi].Selected, q.Options[oi].Label)
		}
		picks[qi].Text = strings.TrimSpace(r.PostFormValue(key + "-other"))
		picks[qi].Touched = len(picks[qi].Selected) > 0 || picks[qi].Text != ""
	}
	return picks
}
