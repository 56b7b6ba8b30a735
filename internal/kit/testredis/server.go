package testredis

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server of one test's own (see StartServer).
type Server struct {
	Addr string // 127.0.0.1:port
}

// URL is the server's REDIS_URL.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// StartServer starts a redis-server for t alone, on a free loopback port,
// without persistence, and kills it when t ends. It is for a test that
// does what would disturb every other test sharing REDIS_URL's server
// (other packages' too, since go test runs packages at once): script
// caches, FLUSHALL and CONFIG SET are server-wide, and a key prefix does
// not keep them apart. It needs no REDIS_URL, only the redis-server
// binary: without it the test is skipped, or fails where CI=true (CI must
// not pass by skipping).
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server not found (%v): CI must install it; this test needs a Redis server of its own", err)
		}
		t.Skip("redis-server not installed: this test needs a Redis server of its own (it changes server-wide state)")
	}
	// Another process may take the free port before the server binds it:
	// then the server exits at once, and another port is tried.
	var out string
	for range 5 {
		s, taken, log := start(t, bin)
		if s != nil {
			return s
		}
		out = log
		if !taken {
			break
		}
	}
	t.Fatalf("redis-server did not start:\n%s", out)
	return nil
}

// start runs bin on a free port and waits until it says it accepts
// connections. It returns nil and the server's output when it exited
// first, with taken when its port was in use.
func start(t testing.TB, bin string) (s *Server, taken bool, output string) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	dieWithParent(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	ready := make(chan struct{})
	done := make(chan string) // the output up to readiness, when it exits
	go func() {
		var head strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			head.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout) // a full pipe would stall the server
		_ = cmd.Wait()
		done <- head.String()
	}()
	stop := func() { _ = cmd.Process.Kill(); <-done }
	select {
	case <-ready:
		t.Cleanup(stop)
		return &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port)}, false, ""
	case log := <-done:
		return nil, strings.Contains(log, "Address already in use"), log
	case <-time.After(30 * time.Second):
		stop()
		t.Fatalf("redis-server did not become ready within 30s")
		return nil, false, ""
	}
}

// freePort returns a loopback port that was free a moment ago (a
// variable so a test can hand out a taken one).
var freePort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Private starts a server of t's own (see StartServer) and returns a
// client of it and a key prefix, as Client does.
func Private(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: StartServer(t).Addr})
	t.Cleanup(func() { _ = rdb.Close() }) // before the server is killed
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("private redis-server: %v", err)
	}
	return rdb, Prefix(t)
}
