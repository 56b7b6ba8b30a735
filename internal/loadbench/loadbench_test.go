package loadbench

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/slacklimits"
)

func TestFirstButton(t *testing.T) {
	blocks := `[{"type":"section","block_id":"s","text":{"type":"mrkdwn","text":"q"},"accessory":{"type":"button","action_id":"full","text":{"type":"plain_text","text":"View"}}},
		{"type":"actions","block_id":"a","elements":[{"type":"button","action_id":"pick.0","value":"0","text":{"type":"plain_text","text":"Yes"}}]}]`
	if id, b, ok := firstButton(blocks, nil); !ok || id != "s" || b.ActionID != "full" {
		t.Errorf("any button: %q %+v %v", id, b, ok)
	}
	pick := func(a string) bool { return a == "pick.0" }
	if id, b, ok := firstButton(blocks, pick); !ok || id != "a" || b.ActionID != "pick.0" || b.Value != "0" {
		t.Errorf("clickable button: %q %+v %v", id, b, ok)
	}
	if _, _, ok := firstButton(`[{"type":"divider"}]`, nil); ok {
		t.Error("found a button in a divider")
	}
}

func TestSamples(t *testing.T) {
	var s Samples
	if s.Percentile(50) != 0 {
		t.Error("empty samples have a percentile")
	}
	for i := 1; i <= 100; i++ {
		s.Add(time.Duration(i) * time.Millisecond)
	}
	if p := s.Percentile(50); p != 50*time.Millisecond {
		t.Errorf("p50 %s", p)
	}
	if p := s.Percentile(99); p != 99*time.Millisecond {
		t.Errorf("p99 %s", p)
	}
}

func TestReadProc(t *testing.T) {
	p, err := ReadProc(os.Getpid())
	if err != nil {
		t.Skip("no /proc:", err)
	}
	if p.RSS <= 0 || p.Threads <= 0 {
		t.Errorf("%+v", p)
	}
}

// TestNullBotLoop runs the equipment against itself: agents ask the null
// bot, which posts to the fake, which clicks, and every ask is answered.
func TestNullBotLoop(t *testing.T) {
	fake, err := NewSlack(SlackOptions{SigningSecret: "s", Click: true, CallID: NullCallID})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	bot := httptest.NewServer(NewNullBot(NullBotOptions{SlackURL: fake.URL(), SigningSecret: "s", Channel: "C1"}).Handler())
	defer bot.Close()
	fake.SetInteractionURL(bot.URL + "/slack/interactions")
	var begin, end SlackCounters
	res := Run(context.Background(), LoadOptions{URL: bot.URL, RunID: "t", Agents: 2, Warmup: 20 * time.Millisecond,
		Duration: 200 * time.Millisecond, MaxAsks: 10_000, Drain: 5 * time.Second, Slack: fake,
		Window: func(b bool) {
			if b {
				begin = fake.Counters()
			} else {
				end = fake.Counters()
			}
		}})
	if res.Answered == 0 || res.Errors != 0 {
		t.Fatalf("answered %d, errors %d, last %v", res.Answered, res.Errors, res.LastErr)
	}
	d := end.Sub(begin)
	if d.Posts == 0 || d.ClickErrors != 0 {
		t.Errorf("window counters %+v", d)
	}

	if ack, _ := fake.TakeLatencies(); ack.Len() == 0 {
		t.Error("no click was acknowledged")
	}
}

// An answered ask counts as stale until an update without controls lands
// on its message; unanswered asks and other messages do not count.
func TestStaleButtons(t *testing.T) {
	s, err := NewSlack(SlackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const question = `[{"type":"section","block_id":"s"},{"type":"actions","block_id":"a","elements":[]}]`
	const answered = `[{"type":"section","block_id":"s"},{"type":"context","elements":[]}]`
	s.shown("1.1", question)
	s.shown("1.2", question)
	s.clickedOn("1.1", "c1")
	s.clickedOn("1.2", "c2")
	s.Answered("c1", time.Now())
	if stale, n := s.StaleButtons(); stale != 1 || n != 1 {
		t.Fatalf("before the update: %d/%d; want 1/1", stale, n)
	}
	s.shown("1.1", answered)
	if stale, n := s.StaleButtons(); stale != 0 || n != 1 {
		t.Fatalf("after the update: %d/%d; want 0/1", stale, n)
	}
	s.ForgetMessages()
	if stale, n := s.StaleButtons(); stale != 0 || n != 0 {
		t.Fatalf("after forgetting: %d/%d", stale, n)
	}
}

func TestSlackRateLimits(t *testing.T) {
	s, err := NewSlack(SlackOptions{RateLimits: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A clock that stands still: no bucket refills while the test runs.
	at := time.Now()
	s.limiter = slacklimits.New(slacklimits.Slack(), 20, func() time.Time { return at })
	post := func(ch string) *http.Response {
		t.Helper()
		resp, err := http.Post(s.URL()+"chat.postMessage", "application/json", strings.NewReader(`{"channel":"`+ch+`","blocks":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	// Slack's chat.postMessage: one a second per channel after a short
	// burst (3, modelled).
	var codes []int
	for range 4 {
		codes = append(codes, post("C1").StatusCode)
	}
	if codes[3] != http.StatusTooManyRequests || codes[0] != 200 || codes[2] != 200 {
		t.Fatalf("statuses %v, want the fourth 429", codes)
	}
	if resp := post("C1"); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q, want 1", resp.Header.Get("Retry-After"))
	}
	if post("C2").StatusCode != 200 {
		t.Fatal("another channel was refused")
	}
	if c := s.Counters(); c.Limited != 2 || c.Posts != 6 {
		t.Fatalf("counters %+v", c)
	}
}

// infoReply is INFO stats, commandstats and cpu as redis-server 7 answers
// them (trimmed), CRLF line ends included.
const infoReply = "# Stats\r\ntotal_connections_received:12\r\ntotal_commands_processed:5000\r\n" +
	"instantaneous_ops_per_sec:3\r\ntotal_reads_processed:1200\r\ntotal_writes_processed:1100\r\n\r\n" +
	"# Commandstats\r\n" +
	"cmdstat_evalsha:calls=100,usec=2500,usec_per_call=25.00,rejected_calls=0,failed_calls=1\r\n" +
	"cmdstat_eval:calls=3,usec=90,usec_per_call=30.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_fcall:calls=2,usec=10,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_hset:calls=400,usec=800,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_client|setname:calls=4,usec=4,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_info:calls=7,usec=200,usec_per_call=28.57,rejected_calls=0,failed_calls=0\r\n\r\n" +
	"# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:2.500000\r\nused_cpu_sys_children:9.000000\r\n" +
	"used_cpu_user_children:9.000000\r\nused_cpu_sys_main_thread:1.000000\r\nused_cpu_user_main_thread:2.000000\r\n"

func TestParseInfo(t *testing.T) {
	s := ParseInfo(infoReply)
	if s.Commands != 5000 || s.Reads != 1200 {
		t.Errorf("commands %d reads %d, want 5000 1200", s.Commands, s.Reads)
	}
	if s.Calls["evalsha"] != 100 || s.Calls["hset"] != 400 || s.Calls["client|setname"] != 4 {
		t.Errorf("calls %v", s.Calls)
	}
	if s.Usec["evalsha"] != 2500 || s.Usec["eval"] != 90 {
		t.Errorf("usec %v", s.Usec)
	}
	// The server's own CPU (user + sys), not its children's nor the main
	// thread's counted twice.
	if s.CPU != 3750*time.Millisecond {
		t.Errorf("cpu %s, want 3.75s", s.CPU)
	}
	if n := s.Scripts(); n != 105 {
		t.Errorf("scripts %d, want 105 (EVALSHA + EVAL + FCALL)", n)
	}
	if d := s.ScriptTime(); d != 2600*time.Microsecond {
		t.Errorf("script time %s, want 2.6ms", d)
	}
}

// Sub is a window's figures: the bot's, without the INFO and polling
// commands the bench itself sent in between.
func TestRedisStatsSub(t *testing.T) {
	r := &Redis{}
	before := ParseInfo("total_commands_processed:100\ntotal_reads_processed:50\nused_cpu_user:1.0\n" +
		"cmdstat_info:calls=1,usec=10\ncmdstat_zcard:calls=0,usec=0\ncmdstat_hset:calls=10,usec=20\n")
	before.own = r.sent("info")
	r.sent("zcard")
	r.sent("zcard") // two polls in the window
	after := ParseInfo("total_commands_processed:140\ntotal_reads_processed:70\nused_cpu_user:1.5\n" +
		"cmdstat_info:calls=2,usec=20\ncmdstat_zcard:calls=5,usec=5\ncmdstat_hset:calls=45,usec=90\n")
	after.own = r.sent("info")
	d := after.Sub(before)
	// 40 commands: the first INFO, two ZCARDs of the bench, 37 of the bot.
	if d.Commands != 37 || d.Reads != 17 {
		t.Errorf("commands %d reads %d, want 37 17", d.Commands, d.Reads)
	}
	if d.Calls["zcard"] != 3 || d.Calls["hset"] != 35 {
		t.Errorf("calls %v: want the bot's 3 zcard and 35 hset", d.Calls)
	}
	if _, ok := d.Calls["info"]; ok {
		t.Errorf("the bench's INFO left in: %v", d.Calls)
	}
	if d.Usec["hset"] != 70 || d.CPU != 500*time.Millisecond {
		t.Errorf("usec %v cpu %s", d.Usec, d.CPU)
	}
}

func TestBreakdown(t *testing.T) {
	s := RedisStats{Calls: map[string]int64{"hset": 12, "evalsha": 30, "zadd": 12, "get": 1, "ping": 0}}
	got := s.Breakdown(2)
	want := []CommandShare{{"evalsha", 30}, {"hset", 12}, {"zadd", 12}}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
}

// With a click delay, every ask waits for it (a person's seconds), and
// staggered agents still all get answered.
func TestClickDelay(t *testing.T) {
	const delay = 150 * time.Millisecond
	fake, err := NewSlack(SlackOptions{SigningSecret: "s", Click: true, CallID: NullCallID})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	fake.SetClickDelay(delay)
	bot := httptest.NewServer(NewNullBot(NullBotOptions{SlackURL: fake.URL(), SigningSecret: "s", Channel: "C1"}).Handler())
	defer bot.Close()
	fake.SetInteractionURL(bot.URL + "/slack/interactions")
	res := Run(context.Background(), LoadOptions{URL: bot.URL, RunID: "d", Agents: 4, Warmup: delay + 50*time.Millisecond,
		Stagger: delay, Duration: 600 * time.Millisecond, MaxAsks: 10_000, Drain: 5 * time.Second, Slack: fake})
	if res.Answered == 0 || res.Errors != 0 {
		t.Fatalf("answered %d, errors %d, last %v", res.Answered, res.Errors, res.LastErr)
	}
	if p := res.Latency.Percentile(1); p < delay {
		t.Errorf("an ask answered in %s, before the %s click delay", p, delay)
	}
	// 4 agents, one ask per 150 ms each at most: 16 in 600 ms, and a
	// straggler at each edge.
	if res.Answered > 4*4+4 {
		t.Errorf("answered %d asks in 600 ms: the delay did not hold them", res.Answered)
	}
	fake.SetClickDelay(0)
	res = Run(context.Background(), LoadOptions{URL: bot.URL, RunID: "i", Agents: 1, Duration: 100 * time.Millisecond,
		MaxAsks: 10_000, Drain: 5 * time.Second, Slack: fake})
	if p := res.Latency.Percentile(50); res.Answered == 0 || p >= delay {
		t.Errorf("after SetClickDelay(0): %d answered, p50 %s", res.Answered, p)
	}
}

// The null bot reuses its connections to Slack as askslack does, even
// when a reply's end comes after its JSON (the fake flushes a post's reply
// before it starts the click): a floor paying a TCP handshake per call
// would flatter the bot.
func TestNullBotReusesConns(t *testing.T) {
	var conns atomic.Int64
	slack := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		writeJSON(w, `{"ok":true,"ts":"1.1"}`)
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond) // the reply's last chunk comes later
	}))
	slack.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	slack.Start()
	defer slack.Close()
	n := NewNullBot(NullBotOptions{SlackURL: slack.URL, SigningSecret: "s", Channel: "C1"})
	for range 5 {
		if _, err := n.slack(context.Background(), "chat.postMessage", nil); err != nil {
			t.Fatal(err)
		}
	}
	if c := conns.Load(); c != 1 {
		t.Errorf("%d connections for 5 sequential calls, want 1", c)
	}
}
