package service

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/slackfake"
)

// recorder is a service that logs its starts and stops and the budget it
// was stopped with.
type recorder struct {
	name    string
	log     *[]string
	failing bool
	budgets *[]time.Duration
}

func (r *recorder) Start(context.Context) error {
	*r.log = append(*r.log, "start "+r.name)
	if r.failing {
		return errors.New(r.name + " failed")
	}
	return nil
}

func (r *recorder) Stop(ctx context.Context) error {
	*r.log = append(*r.log, "stop "+r.name)
	if d, ok := ctx.Deadline(); ok && r.budgets != nil {
		*r.budgets = append(*r.budgets, time.Until(d).Round(time.Hour))
	}
	return nil
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestPhasesStartInOrderAndStopInReverse(t *testing.T) {
	t.Parallel()
	var log []string
	var budgets []time.Duration
	rec := func(name string) *recorder { return &recorder{name: name, log: &log, budgets: &budgets} }
	phases := []phase{
		{name: "one", budget: time.Hour, services: []service{rec("a"), rec("b")}},
		{name: "two", budget: 3 * time.Hour, services: []service{rec("c")}},
	}
	if err := startPhases(context.Background(), phases, quiet); err != nil {
		t.Fatal(err)
	}
	stopPhases(phases, quiet)
	want := "start a,start b,start c,stop c,stop b,stop a"
	if got := strings.Join(log, ","); got != want {
		t.Fatalf("order %s; want %s", got, want)
	}
	// Each phase has its own budget; services of one phase share it.
	if len(budgets) != 3 || budgets[0] != 3*time.Hour || budgets[1] != time.Hour || budgets[2] != time.Hour {
		t.Fatalf("budgets %v; want [3h 1h 1h]", budgets)
	}
}

func TestPhasesStopWhatStartedWhenAStartFails(t *testing.T) {
	t.Parallel()
	var log []string
	phases := []phase{
		{name: "one", budget: time.Second, services: []service{&recorder{name: "a", log: &log}}},
		{name: "two", budget: time.Second, services: []service{&recorder{name: "b", log: &log, failing: true}, &recorder{name: "c", log: &log}}},
		{name: "three", budget: time.Second, services: []service{&recorder{name: "d", log: &log}}},
	}
	if err := startPhases(context.Background(), phases, quiet); err == nil || err.Error() != "b failed" {
		t.Fatalf("err %v; want b's", err)
	}
	// c never started but is stopped (Stop before Start is safe); d is untouched.
	want := "start a,start b,stop c,stop b,stop a"
	if got := strings.Join(log, ","); got != want {
		t.Fatalf("order %s; want %s", got, want)
	}
}

func TestServiceFuncsShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	starts, undos, stops := 0, 0, 0
	s := &serviceFuncs{
		start: func(context.Context) (func(), error) { starts++; return func() { undos++ }, nil },
		stop:  func(context.Context) error { stops++; return nil },
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Fatal("a second Start succeeded")
	}
	for range 2 {
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal("Start after Stop:", err)
	}
	if starts != 1 || undos != 1 || stops != 1 {
		t.Fatalf("starts %d undos %d stops %d; want 1 each", starts, undos, stops)
	}
	idle := &serviceFuncs{stop: func(context.Context) error { stops++; return nil }}
	if err := idle.Stop(ctx); err != nil || stops != 2 {
		t.Fatalf("Stop before Start: %v, stops %d", err, stops)
	}
}

// The real wiring, in process: NewApp builds every part against a fake
// Slack and the embedded store; Run serves until its context ends, then
// stops everything and returns.
func TestAppRunsAndStops(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(slackfake.Options{BotToken: "xoxb-test"})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	cfg := &Config{BotToken: "xoxb-test", APIURL: fake.APIURL(), Addr: "127.0.0.1:0", Channel: "C1",
		Retention: time.Hour, ShutdownGrace: 5 * time.Second, ClaimLease: 15 * time.Second, ReconcileAfter: time.Minute,
		ReattachGrace: 30 * time.Second, ReadTimeout: 30 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := NewApp(ctx, cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	phases := a.phases()
	// Watch the last phase start (the HTTP server), then ask it.
	done := make(chan error, 1)
	go func() {
		if err := startPhases(ctx, phases, quiet); err != nil {
			done <- err
			return
		}
		ready <- a.addr
		<-ctx.Done()
		stopPhases(phases, quiet)
		done <- nil
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("readyz: %d %s", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Fatal("the HTTP server still answers after stop")
	}

	// Run itself: with its context already ended it starts, stops and returns.
	b, err := NewApp(context.Background(), cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ended, stop := context.WithCancel(context.Background())
	stop()
	if err := b.Run(ended); err != nil {
		t.Fatal(err)
	}
}
