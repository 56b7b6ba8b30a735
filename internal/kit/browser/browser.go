// Package browser starts a headless Chromium for the browser tests (the
// playground's page, the answer page) and waits on pages the way a person
// would look at them: on every DOM change, across navigations, never by
// sleeping. Test kit: only tests import it.
package browser

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Zone is the viewer's time zone in the browser tests: Slack dates must
// show in it, whatever the machine's zone.
const Zone = "America/New_York"

// Find returns a Chromium to drive: $ASKSLACK_CHROMIUM, else the first of
// the usual names on PATH ("" when there is none).
func Find() string {
	if p := os.Getenv("ASKSLACK_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Start starts one headless Chromium for the test and returns a tab's
// context, 1280×860 in Zone. Without a browser the test is skipped, except
// in CI.
func Start(t *testing.T) context.Context {
	t.Helper()
	path := Find()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium found (CI=true): install Debian's chromium package (.ci/run does) or set ASKSLACK_CHROMIUM")
		}
		t.Skip("no Chromium found: install Debian's chromium package (apt-get install chromium) or set ASKSLACK_CHROMIUM to run the browser tests")
	}
	// The flags of a sandboxed machine with no network beyond loopback:
	// without the background-networking ones Chromium's own connections
	// are refused, many at a time.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("font-render-hinting", "none"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 860),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: Zone})
			return err
		}),
	)
	if err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	t.Logf("browser: %s", path)
	return ctx
}

// Until waits up to 30 s for a JavaScript condition on the tab, re-checked
// on every DOM change; a page a navigation replaced meanwhile is asked
// again. It returns the last error (nil when the condition held).
func Until(tab context.Context, js string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(tab, time.Until(deadline))
		_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+js+")", chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		if err == nil {
			return nil
		}
		navigated := strings.Contains(err.Error(), "context") || strings.Contains(err.Error(), "navigated")
		if time.Now().After(deadline) || !navigated {
			return err
		}
	}
}

// Text is the tab's visible text, for a failure's message.
func Text(tab context.Context) string {
	ctx, cancel := context.WithTimeout(tab, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// Click clicks the element css selects, again when the page replaced it
// between finding and clicking (a live page swaps its content when asks
// change, as a person would just click again), for up to 30 s.
func Click(tab context.Context, css string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(tab, time.Until(deadline))
		_, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(css)))
		cancel()
		if err == nil {
			return nil
		}
		gone := strings.Contains(err.Error(), "Could not find node") || strings.Contains(err.Error(), "context") || strings.Contains(err.Error(), "navigated")
		if time.Now().After(deadline) || !gone {
			return err
		}
	}
}
