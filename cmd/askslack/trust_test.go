package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// The tokens of the trust tests: three agents, an answer surface (configured
// by its hash only) and an operator.
const (
	aliceLaptop = "alice-laptop-secret-0001"
	ciToken     = "ci-secret-0000000000002"
	bobLaptop   = "bob-laptop-secret-00003"
	consoleTok  = "console-secret-00000004"
	opsToken    = "ops-secret-0000000000005"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// trustDeployment is one bot with named callers of every role, alice's
// laptop bound to alice, and an allowlist of alice and bob; env adds
// variables, name then value.
func trustDeployment(t *testing.T, env ...string) (*deployment, *bot) {
	t.Helper()
	d := newDeployment(t, false)
	d.env["ASKSLACK_API_TOKENS"] = "alice-laptop:" + aliceLaptop + ",ci:" + ciToken + ",bob-laptop:" + bobLaptop
	d.env["ASKSLACK_ANSWER_TOKENS"] = "console:sha256:" + sha256Hex(consoleTok)
	d.env["ASKSLACK_ADMIN_TOKENS"] = "ops:" + opsToken
	d.env["ASKSLACK_CALLER_PRINCIPALS"] = "alice-laptop=" + alice.ID
	d.env["ASKSLACK_REQUIRE_PRINCIPAL"] = "true"
	d.env["ASKSLACK_ALLOWED_USERS"] = alice.ID + "," + bob.ID
	for i := 0; i+1 < len(env); i += 2 {
		d.env[env[i]] = env[i+1]
	}
	return d, d.start(viaHTTP)
}

// api calls the bot's host API with a bearer token and returns the status
// and body.
func api(t *testing.T, b *bot, method, path, token, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+b.addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// askAsyncAs files an ask with Prefer: respond-async as the caller.
func askAsyncAs(t *testing.T, b *bot, token string, v any) {
	t.Helper()
	if code, body := api(t, b, "POST", "/v1/asks", token, mustJSON(v), "Prefer", "respond-async"); code != http.StatusAccepted {
		t.Fatalf("asking: %d %s", code, body)
	}
}

func wantCode(t *testing.T, what string, code int, body string, wantStatus int, wantCode string) {
	t.Helper()
	if code != wantStatus || !strings.Contains(body, `"`+wantCode+`"`) {
		t.Errorf("%s: %d %s; want %d %s", what, code, body, wantStatus, wantCode)
	}
}

// Issue 21: with nothing but its own token, an agent cannot answer its own
// gate, see or touch another caller's asks and late answers, or pick its
// own approver; an answer surface answers in its own name.
func TestE2ETheHumanGateCannotBeForged(t *testing.T) {
	t.Parallel()
	d, b := trustDeployment(t)
	ctx := testCtx(t)

	plan := planQuestion("plan-1")
	askAsyncAs(t, b, aliceLaptop, plan)
	m := waitPosted(t, ctx, d.fake, "plan-1")
	if !strings.Contains(string(m.Blocks), "`alice-laptop`") {
		t.Errorf("the question does not name its caller: %s", m.Blocks)
	}

	t.Run("an agent answering its own ask is refused and nothing changes", func(t *testing.T) {
		code, body := api(t, b, "POST", "/v1/asks/plan-1/answer", aliceLaptop,
			`{"answers":[{"id":"q1","selected":["Approve"]}],"respondent":{"userId":"U0ALICE","userName":"alice"}}`)
		wantCode(t, "agent on the answer route", code, body, 403, "FORBIDDEN")
		if !strings.Contains(body, "people, not agents") {
			t.Errorf("the refusal does not say why: %s", body)
		}
		code, body = api(t, b, "GET", "/v1/asks/plan-1", aliceLaptop, "")
		if code != 200 || !strings.Contains(body, `"state":"open"`) {
			t.Fatalf("after the refused answer: %d %s", code, body)
		}
		if cur, _ := d.fake.Message(m.Channel, m.TS); !hasControls(cur) {
			t.Fatal("the refused answer took the buttons")
		}
	})

	t.Run("another agent learns nothing of an ask and cannot touch it", func(t *testing.T) {
		for _, c := range []struct{ method, path string }{
			{"GET", "/v1/asks/plan-1"}, {"GET", "/v1/asks/plan-1?waitMs=10"}, {"GET", "/v1/asks/plan-1/wait"}, {"DELETE", "/v1/asks/plan-1"},
		} {
			code, body := api(t, b, c.method, c.path, ciToken, "")
			wantCode(t, "ci: "+c.method+" "+c.path, code, body, 404, "NOT_FOUND")
			if strings.Contains(body, "Deploy") || strings.Contains(body, "alice") {
				t.Errorf("the refusal reveals the ask: %s", body)
			}
		}
		code, body := api(t, b, "POST", "/v1/asks", ciToken, mustJSON(plan))
		wantCode(t, "ci re-using alice's callId", code, body, 409, "CALL_CONFLICT")
		if strings.Contains(body, "Deploy") || strings.Contains(body, "alice") {
			t.Errorf("the conflict reveals the ask: %s", body)
		}
		code, body = api(t, b, "GET", "/v1/asks/plan-1", aliceLaptop, "")
		if code != 200 || !strings.Contains(body, `"state":"open"`) {
			t.Fatalf("alice's ask after ci's tries: %d %s", code, body)
		}
	})

	t.Run("the operator binds the principal, not the agent", func(t *testing.T) {
		other := oneQuestion("mismatch-1", "Yes", "No")
		other.Agent.Principal = bob.ID
		code, body := api(t, b, "POST", "/v1/asks", aliceLaptop, mustJSON(other))
		wantCode(t, "alice-laptop naming bob", code, body, 403, "PRINCIPAL_MISMATCH")
		if code, body := api(t, b, "GET", "/v1/asks/mismatch-1", opsToken, ""); code != 404 {
			t.Errorf("a refused ask was stored: %d %s", code, body)
		}
		// plan-1 is alice's (bound): bob, though allowlisted, may not answer it.
		if _, err := d.fake.ClickButton(ctx, bob, m.Channel, m.TS, "Approve", slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		waitEphemeral(t, ctx, d.fake, bob.ID, "on whose behalf")
		if code, body := api(t, b, "GET", "/v1/asks/plan-1", opsToken, ""); !strings.Contains(body, `"state":"open"`) {
			t.Fatalf("bob's click on alice's bound ask: %d %s", code, body)
		}
		// An unbound caller naming a principal grants nothing: the agent
		// would pick its own approver. ci names carol; bob answers.
		hint := oneQuestion("hint-1", "Yes", "No")
		hint.Agent.Principal = carol.ID
		askAsyncAs(t, b, ciToken, hint)
		hm := waitPosted(t, ctx, d.fake, "hint-1")
		if _, err := d.fake.ClickButton(ctx, bob, hm.Channel, hm.TS, "Yes", slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		waitMessage(t, ctx, d.fake, hm.Channel, hm.TS, "answered by bob", func(m slackfake.Message) bool { return !hasControls(m) })
	})

	t.Run("the console answers in its own name, with its claim shown beside it", func(t *testing.T) {
		code, body := api(t, b, "POST", "/v1/asks/plan-1/answer", consoleTok,
			`{"answers":[{"id":"q1","selected":["Approve"]}],"respondent":{"userId":"U0ALICE","userName":"alice"}}`)
		if code != 200 {
			t.Fatalf("console answer: %d %s", code, body)
		}
		_, body = api(t, b, "GET", "/v1/asks/plan-1", aliceLaptop, "")
		var st hostapi.Status
		if err := json.Unmarshal([]byte(body), &st); err != nil || st.Respondent == nil {
			t.Fatalf("status: %v %s", err, body)
		}
		if st.Respondent.UserName != "console" || st.Respondent.UserID != "" || st.Respondent.Claim == nil || st.Respondent.Claim.UserName != "alice" {
			t.Errorf("respondent = %+v; want the console, alice as its claim", st.Respondent)
		}
		done := waitMessage(t, ctx, d.fake, m.Channel, m.TS, "answered via console", func(m slackfake.Message) bool { return !hasControls(m) })
		if !bytes.Contains(done.Blocks, []byte("alice via *console*")) {
			t.Errorf("the answered message does not name the surface: %s", done.Blocks)
		}
	})

	t.Run("roles: an answer surface cannot ask, an operator reads and withdraws but does not answer", func(t *testing.T) {
		code, body := api(t, b, "POST", "/v1/asks", consoleTok, mustJSON(oneQuestion("console-ask", "A")))
		wantCode(t, "console asking", code, body, 403, "FORBIDDEN")
		askAsyncAs(t, b, bobLaptop, oneQuestion("bob-1", "Yes", "No"))
		code, body = api(t, b, "POST", "/v1/asks/bob-1/answer", opsToken, `{"answers":[{"id":"q1","selected":["Yes"]}]}`)
		wantCode(t, "ops answering", code, body, 403, "FORBIDDEN")
		code, body = api(t, b, "DELETE", "/v1/asks/bob-1", consoleTok, "")
		wantCode(t, "console withdrawing", code, body, 403, "FORBIDDEN")
		if code, body := api(t, b, "GET", "/v1/asks/bob-1", consoleTok, ""); code != 200 {
			t.Errorf("console reading any ask: %d %s", code, body)
		}
		if code, body := api(t, b, "DELETE", "/v1/asks/bob-1", opsToken, ""); code != 200 || !strings.Contains(body, `"aborted"`) {
			t.Errorf("ops withdrawing any ask: %d %s", code, body)
		}
		if code, _ := api(t, b, "GET", "/v1/asks/bob-1", "not-a-token-at-all-000", ""); code != 401 {
			t.Errorf("an unknown token: %d", code)
		}
		if code, _ := api(t, b, "GET", "/v1/asks/bob-1", "sha256:"+sha256Hex(consoleTok), ""); code != 401 {
			t.Errorf("the configured hash used as the bearer: %d; the bearer is the secret", code)
		}
	})
}

// Two callers that happen to use one sessionId never see or ack each
// other's late answers (people type secrets into "Other…").
func TestE2ELateAnswersStayWithTheirCaller(t *testing.T) {
	t.Parallel()
	d, b := trustDeployment(t)
	ctx := testCtx(t)
	req := timedQuestion("late-1", 300*time.Millisecond, "Yes", "No")
	req.Agent.SessionID = "shared-session"
	code, body := api(t, b, "POST", "/v1/asks", bobLaptop, mustJSON(req))
	if code != 200 || !strings.Contains(body, `"pending":true`) {
		t.Fatalf("bob's timed ask: %d %s", code, body)
	}
	m := waitPosted(t, ctx, d.fake, "late-1")
	if _, err := d.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	var msgs hostapi.Messages
	for ctx.Err() == nil {
		_, body = api(t, b, "GET", "/v1/sessions/shared-session/messages?waitMs=2000", bobLaptop, "")
		if err := json.Unmarshal([]byte(body), &msgs); err != nil {
			t.Fatal(body)
		}
		if len(msgs.Messages) > 0 {
			break
		}
	}
	if len(msgs.Messages) != 1 {
		t.Fatalf("bob's session messages: %s", body)
	}
	_, body = api(t, b, "GET", "/v1/sessions/shared-session/messages", ciToken, "")
	if !strings.Contains(body, `"messages":[]`) {
		t.Errorf("ci sees bob's late answer under the same sessionId: %s", body)
	}
	_, body = api(t, b, "GET", "/v1/sessions/shared-session/questions", ciToken, "")
	if strings.Contains(body, "late-1") {
		t.Errorf("ci sees bob's question in its projection: %s", body)
	}
	code, body = api(t, b, "POST", "/v1/sessions/shared-session/messages/"+msgs.Messages[0].ID+"/ack", ciToken, "")
	wantCode(t, "ci acking bob's message", code, body, 404, "NOT_FOUND")
	if code, body := api(t, b, "POST", "/v1/sessions/shared-session/messages/"+msgs.Messages[0].ID+"/ack", bobLaptop, ""); code != 200 {
		t.Fatalf("bob acking his own: %d %s", code, body)
	}
	// An operator reads a caller's session by naming the caller.
	if _, body := api(t, b, "GET", "/v1/sessions/shared-session/questions?caller=bob-laptop", opsToken, ""); !strings.Contains(body, "late-1") {
		t.Errorf("ops reading bob's session: %s", body)
	}
}

// Bad caller configuration stops the bot at start, naming the variable.
func TestE2EBadCallerConfigExits(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	for _, c := range []struct {
		name, variable, value, want string
		extra                       map[string]string
	}{
		{"short secret", "ASKSLACK_API_TOKENS", "ci:short", "shorter than 16", nil},
		{"empty name", "ASKSLACK_ADMIN_TOKENS", ":" + opsToken, "empty name", nil},
		{"empty secret", "ASKSLACK_ANSWER_TOKENS", "console:", "empty secret", nil},
		{"malformed hash", "ASKSLACK_ANSWER_TOKENS", "console:sha256:abc", "sha256:<64 hex", nil},
		{"name in two roles", "ASKSLACK_ADMIN_TOKENS", "ci:" + opsToken, "both name \"ci\"", map[string]string{"ASKSLACK_API_TOKENS": "ci:" + ciToken}},
		{"unnamed answer token", "ASKSLACK_ANSWER_TOKENS", consoleTok, "has no name", nil},
		{"binding of an unknown caller", "ASKSLACK_CALLER_PRINCIPALS", "nobody=U0ALICE", "not an agent caller", map[string]string{"ASKSLACK_API_TOKENS": "ci:" + ciToken}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "SLACK_BOT_TOKEN=xoxb-test",
				"SLACK_API_URL=" + strings.TrimSuffix(d.fake.APIURL(), "/"), "SLACK_SIGNING_SECRET=" + testSecret,
				"ASKSLACK_ADDR=" + freeAddr(t), "ASKSLACK_CHANNEL=" + testChannel, c.variable + "=" + c.value}
			for k, v := range c.extra {
				env = append(env, k+"="+v)
			}
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(cctx, binPath)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("exit: %v; want 1\n%s", err, out)
			}
			if !strings.Contains(string(out), c.variable) || !strings.Contains(string(out), c.want) {
				t.Errorf("the message should name %s and say %q:\n%s", c.variable, c.want, out)
			}
		})
	}
}

// planQuestion is a plan approval: "Deploy?" with a plan, approved by
// "Approve".
func planQuestion(callID string) *waterfall.Request {
	req := oneQuestion(callID, "Approve", "Revise")
	req.Questions[0].Question = "Deploy the new schema?"
	req.Questions[0].Detail = "1. migrate\n2. deploy"
	req.Questions[0].Intent = &waterfall.Intent{Kind: "plan-review", Approve: "Approve"}
	return req
}

// POST /v1/asks/{callId}/continue: only the agent that asked may say it
// went on without the answer — another agent learns nothing (404), an
// answer surface or an operator is refused (403) — and an ack says whether
// it admitted the late answer first, so a second deliverer passes nothing
// on.
func TestE2EContinueIsTheAskersAndAckSaysFirst(t *testing.T) {
	t.Parallel()
	d, b := trustDeployment(t)
	ctx := testCtx(t)
	req := timedQuestion("went-on-1", time.Hour, "Yes", "No")
	req.Agent.SessionID = "bob-session"
	askAsyncAs(t, b, bobLaptop, req)
	m := waitPosted(t, ctx, d.fake, "went-on-1")
	code, body := api(t, b, "POST", "/v1/asks/went-on-1/continue", ciToken, "")
	wantCode(t, "another agent continuing bob's ask", code, body, 404, "NOT_FOUND")
	code, body = api(t, b, "POST", "/v1/asks/went-on-1/continue", consoleTok, "")
	wantCode(t, "an answer surface continuing an ask", code, body, 403, "FORBIDDEN")
	code, body = api(t, b, "POST", "/v1/asks/went-on-1/continue", opsToken, "")
	wantCode(t, "an operator continuing an ask", code, body, 403, "FORBIDDEN")
	code, body = api(t, b, "POST", "/v1/asks/went-on-1/continue", "", "")
	wantCode(t, "no token", code, body, 401, "UNAUTHORIZED")
	if code, body := api(t, b, "GET", "/v1/asks/went-on-1", bobLaptop, ""); code != 200 || !strings.Contains(body, `"state":"open"`) {
		t.Fatalf("after the refusals the ask must still be open: %d %s", code, body)
	}
	code, body = api(t, b, "POST", "/v1/asks/went-on-1/continue", bobLaptop, "")
	if code != 200 || !strings.Contains(body, `"state":"continued"`) {
		t.Fatalf("bob continuing his ask: %d %s", code, body)
	}
	if code, body := api(t, b, "POST", "/v1/asks/went-on-1/continue", bobLaptop, ""); code != 200 {
		t.Fatalf("continuing twice: %d %s", code, body)
	}
	waitMessage(t, ctx, d.fake, m.Channel, m.TS, "continued", func(m slackfake.Message) bool {
		return hasControls(m) && strings.Contains(string(m.Blocks), "moved on")
	})
	if _, err := d.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	var msgs hostapi.Messages
	for ctx.Err() == nil && len(msgs.Messages) == 0 {
		_, body = api(t, b, "GET", "/v1/sessions/bob-session/messages?waitMs=2000", bobLaptop, "")
		if err := json.Unmarshal([]byte(body), &msgs); err != nil {
			t.Fatal(body)
		}
	}
	ack := "/v1/sessions/bob-session/messages/" + msgs.Messages[0].ID + "/ack"
	if code, body := api(t, b, "POST", ack, bobLaptop, ""); code != 200 || !strings.Contains(body, `"first":true`) {
		t.Fatalf("the first ack: %d %s", code, body)
	}
	if code, body := api(t, b, "POST", ack, bobLaptop, ""); code != 200 || !strings.Contains(body, `"first":false`) {
		t.Fatalf("the second ack must say it was not first: %d %s", code, body)
	}
	// An untimed ask has no session to take a late answer.
	askAsyncAs(t, b, bobLaptop, oneQuestion("untimed-1", "Yes", "No"))
	code, body = api(t, b, "POST", "/v1/asks/untimed-1/continue", bobLaptop, "")
	wantCode(t, "continuing an untimed ask", code, body, 400, "BAD_REQUEST")
}
