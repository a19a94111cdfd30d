package reports

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ScreenshotEnv names the file TestBrowser copies its screenshot of a
// broken run's page to, when set: `LOCKLAB_SCREENSHOT=docs/run-page.png`;
// indexScreenshotEnv the file for its screenshot of the report's index
// (`LOCKLAB_SCREENSHOT_INDEX=docs/report-index.png`).
const (
	screenshotEnv      = "LOCKLAB_SCREENSHOT"
	indexScreenshotEnv = "LOCKLAB_SCREENSHOT_INDEX"
)

// Viewport of the browser test: a laptop screen, so that what the
// screenshot shows is what a reader sees without scrolling.
const viewW, viewH = 1280, 900

// chromium finds a Chromium or Chrome to drive.
func chromium() (string, bool) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, true
		}
	}
	return "", false
}

// TestBrowser opens the report built from the golden runs (by the code
// `check verify` runs) in headless Chromium: the index and a broken run's
// page must load with no console error, the run's timeline must have a lane
// per client, and the overlap must be marked within the first screen. It
// always takes a screenshot of the run's page, and copies it to
// $LOCKLAB_SCREENSHOT when set.
func TestBrowser(t *testing.T) {
	exe, ok := chromium()
	if !ok {
		t.Skip("no Chromium on PATH (chromium, chromium-browser or google-chrome): make deps installs it when root (Debian: apt-get install chromium)")
	}
	dir, _, _ := goldenReport(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.WindowSize(viewW, viewH),
		chromedp.UserDataDir(t.TempDir()), chromedp.Env("TMPDIR="+t.TempDir())) // Chromium leaves its singleton socket's folder there
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run sandboxed as root
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(ctx)
	defer cancelTab()
	// The window's size is not the page's: set the viewport itself.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(viewW, viewH)); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}

	// Every console error and uncaught exception of either page.
	var mu sync.Mutex
	var problems []string
	listen, stopListening := context.WithCancel(ctx)
	messages := chromedp.Console(listen)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()

	index := "file://" + filepath.Join(dir, IndexFile)
	if err := chromedp.Do(ctx, chromedp.Navigate(index)); err != nil {
		t.Fatal(err)
	}
	count := func(selector string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", selector)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`a[href="5-del-release-broken/run.html"]`); n == 0 {
		t.Error("the index does not link the broken run's page")
	}
	if n := count("table tbody tr"); n < 6 {
		t.Errorf("the index's matrix has %d rows, want one per golden run", n)
	}
	if to := os.Getenv(indexScreenshotEnv); to != "" {
		shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, shot, 0o644); err != nil {
			t.Fatalf("%s=%s: %v", indexScreenshotEnv, to, err)
		}
		t.Logf("screenshot of %s written to %s", index, to)
	}

	page := "file://" + filepath.Join(dir, "5-del-release-broken", RunPageFile)
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	if n := count("svg.timeline .view.detail .lane.client-lane"); n != 4 {
		t.Errorf("the timeline has %d client lanes, want 4 (clients 0 to 3)", n)
	}
	if n := count("svg.timeline .view.detail .violation"); n == 0 {
		t.Error("the timeline does not mark the violation")
	}
	if n := count("svg.sequence .step.violation"); n == 0 {
		t.Error("the counterexample does not mark the violating step")
	}
	// Who held the lock, the fault and the overlap, without scrolling.
	for _, selector := range []string{
		"svg.timeline .view.detail .violation",
		"svg.timeline .view.detail .pause",
		"svg.timeline .view.detail .hold",
	} {
		bottom, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf("document.querySelector(%q).getBoundingClientRect().bottom", selector)))
		if err != nil {
			t.Fatalf("%s: %v", selector, err)
		}
		if bottom > viewH {
			t.Errorf("%s ends at y=%.0f, below the first %d px of the page", selector, bottom, viewH)
		}
	}

	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	stopListening()
	<-done
	mu.Lock()
	if len(problems) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(problems, "\n"))
	}
	mu.Unlock()

	path := filepath.Join(t.TempDir(), "run-page.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if to := os.Getenv(screenshotEnv); to != "" {
		if err := os.WriteFile(to, shot, 0o644); err != nil {
			t.Fatalf("%s=%s: %v", screenshotEnv, to, err)
		}
		t.Logf("screenshot of %s written to %s", page, to)
	}
}
