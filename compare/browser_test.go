package compare

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Environment of TestPageInBrowser: a real compare.html to open instead of
// the fixture's (LOCKLAB_COMPARE_PAGE=locklab-report/compare.html), and
// where to copy its screenshot (LOCKLAB_SCREENSHOT=docs/compare-page.png),
// as reports' TestBrowser makes docs/run-page.png.
const (
	pageEnv       = "LOCKLAB_COMPARE_PAGE"
	screenshotEnv = "LOCKLAB_SCREENSHOT"
)

// viewW is a laptop screen's width: the grid must fit it, so that a row
// is read without scrolling sideways.
const viewW, viewH = 1280, 900

// TestPageInBrowser opens the comparison page in headless Chromium: the
// fixture's, or the one $LOCKLAB_COMPARE_PAGE names. It wants no console
// error, every cell of the grid with a verdict colour or a note, the grid
// no wider than a laptop's screen, and a print layout that keeps the
// colours; it takes a screenshot of the whole page, copied to
// $LOCKLAB_SCREENSHOT when set.
func TestPageInBrowser(t *testing.T) {
	exe := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		t.Skip("no Chromium on PATH (make deps installs it when root)")
	}
	page := os.Getenv(pageEnv)
	if page == "" {
		dir := t.TempDir()
		if err := Save(dir, fixture()); err != nil {
			t.Fatal(err)
		}
		page = filepath.Join(dir, PageFile)
	}
	page, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.WindowSize(viewW, viewH),
		chromedp.UserDataDir(t.TempDir()), chromedp.Env("TMPDIR="+t.TempDir()))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run sandboxed as root
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(ctx)
	defer cancelTab()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(viewW, viewH)); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	var mu sync.Mutex
	var problems []string
	listen, stopListening := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range chromedp.Console(listen) {
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
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatal(err)
	}
	eval := func(js string) float64 {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	cells := eval(`document.querySelectorAll("table.grid td[data-lock]").length`)
	coloured := eval(`[...document.querySelectorAll("table.grid td[data-verdict]")].filter(td => getComputedStyle(td).backgroundColor !== "rgba(0, 0, 0, 0)").length`)
	verdicts := eval(`document.querySelectorAll("table.grid td[data-verdict]").length`)
	noted := eval(`[...document.querySelectorAll("table.grid td.none a")].filter(a => document.getElementById(a.getAttribute("href").slice(1))).length`)
	if cells == 0 || coloured != verdicts || verdicts+noted != cells {
		t.Errorf("%v cells: %v with a verdict, %v of them coloured, %v — with a note; want every cell one or the other", cells, verdicts, coloured, noted)
	}
	if w := eval(`document.querySelector("table.grid").getBoundingClientRect().right`); w > viewW {
		t.Errorf("the grid ends at x=%.0f, wider than a %d px screen", w, viewW)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF())
	if err != nil || len(pdf) == 0 {
		t.Errorf("print: %d bytes, %v", len(pdf), err)
	}
	stopListening()
	<-done
	mu.Lock()
	if len(problems) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(problems, "\n"))
	}
	mu.Unlock()
	if err := os.WriteFile(filepath.Join(t.TempDir(), "compare-page.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if to := os.Getenv(screenshotEnv); to != "" {
		if err := os.WriteFile(to, shot, 0o644); err != nil {
			t.Fatalf("%s=%s: %v", screenshotEnv, to, err)
		}
		t.Logf("screenshot of %s written to %s", page, to)
	}
}
