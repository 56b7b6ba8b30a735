// Command healthcheck probes the bot's /healthz from inside its container.
//
// The askslack image is distroless (no shell, curl or wget), so
// docker-compose's HEALTHCHECK runs this tiny static binary instead:
//
//	/healthcheck                       GET http://127.0.0.1:8080/healthz
//	/healthcheck http://host:port/path GET that URL
//
// Without an argument the port comes from ASKSLACK_ADDR (default :8080).
// It exits 0 on a 2xx answer within 3 seconds and 1 otherwise. Kubernetes
// does not need it: its probes are httpGet.
package main

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

func main() {
	if err := probe(probeURL(os.Args[1:], os.Getenv("ASKSLACK_ADDR")), 3*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "healthcheck:", err)
		os.Exit(1)
	}
}

// probeURL returns the URL to check: the first argument, or /healthz on
// the loopback interface at ASKSLACK_ADDR's port.
func probeURL(args []string, addr string) string {
	if len(args) > 0 && args[0] != "" {
		return args[0]
	}
	port := "8080"
	if _, p, err := net.SplitHostPort(addr); err == nil && p != "" {
		port = p
	}
	return "http://" + net.JoinHostPort("127.0.0.1", port) + "/healthz"
}

// probe sends one HTTP/1.0 GET and checks the status line. It speaks just
// enough HTTP for the bot's own server, which keeps this binary at a fraction
// of net/http's size.
func probe(rawURL string, timeout time.Duration) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	if u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("%s: only http://host:port/path URLs are supported", rawURL)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	conn, err := net.DialTimeout("tcp", host, timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: askslack-healthcheck\r\n\r\n", u.RequestURI(), u.Host); err != nil {
		return err
	}
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", rawURL, err)
	}
	// "HTTP/1.1 200 OK"
	proto, rest, _ := strings.Cut(strings.TrimSpace(status), " ")
	code, _, _ := strings.Cut(rest, " ")
	if !strings.HasPrefix(proto, "HTTP/") || len(code) != 3 || code[0] != '2' {
		return fmt.Errorf("%s: %s", rawURL, strings.TrimSpace(status))
	}
	return nil
}
