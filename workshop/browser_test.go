package workshop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestPredictFolded opens a predict page in headless Chromium: the
// question and the timeline are shown, the answer is folded (its details
// closed, its verdicts not rendered) until the reader opens it.
func TestPredictFolded(t *testing.T) {
	exe, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium (make deps installs it)")
	}
	out := t.TempDir()
	if _, err := Write(Options{From: from(), Out: out}); err != nil {
		t.Fatal(err)
	}
	// TMPDIR: Chromium leaves its singleton socket's folder there.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.UserDataDir(t.TempDir()),
		chromedp.Env("TMPDIR="+t.TempDir()))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run sandboxed as root
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(ctx)
	defer cancelTab()
	const js = `({
		question: document.querySelector('.question').offsetParent !== null,
		timeline: document.querySelector('figure svg.timeline') !== null,
		open: document.querySelector('details').open,
		answer: document.querySelector('details table').checkVisibility(),
	})`
	page := "file://" + filepath.Join(out, ClassDir, "predict", "5-del-release.html")
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	before, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]bool](js))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('summary').click(), true`)); err != nil {
		t.Fatal(err)
	}
	after, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]bool](js))
	if err != nil {
		t.Fatal(err)
	}
	if !before["question"] || !before["timeline"] || before["open"] || before["answer"] {
		t.Errorf("before opening: %v; want the question and the timeline shown, the answer folded", before)
	}
	if !after["open"] || !after["answer"] {
		t.Errorf("after a click on the summary: %v; want the answer shown", after)
	}
}
