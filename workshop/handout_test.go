package workshop

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/locklab/locklab/pitfalls"
)

// TestHandoutPrints prints the handout to PDF with headless Chromium, on
// A4 and on Letter, and wants one page for the summary and one per
// pitfall. Each sheet breaks after itself and its figures do not break
// inside, so a sheet whose text and figures do not fit a page, or a
// figure taller than the page, takes more pages: the count catches any
// cut figure.
func TestHandoutPrints(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium (make deps installs it)")
	}
	out := t.TempDir()
	if _, err := Write(Options{From: from(), Out: out}); err != nil {
		t.Fatal(err)
	}
	want := 1 + len(pitfalls.Catalogue())
	page := regexp.MustCompile(`/Type\s*/Page\b`)
	for _, paper := range Papers {
		t.Run(paper.Name, func(t *testing.T) {
			t.Parallel()
			pdf := filepath.Join(out, paper.Name+".pdf")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
				"--user-data-dir="+t.TempDir(), "--print-to-pdf="+pdf, "file://"+filepath.Join(out, ClassDir, paper.File))
			cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir()) // Chromium leaves its singleton socket's folder there
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("chromium: %v\n%s", err, b)
			}
			b, err := os.ReadFile(pdf)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(page.FindAll(b, -1)); got != want || !bytes.HasPrefix(b, []byte("%PDF")) {
				t.Errorf("%s handout: %d pages, want %d (the summary and one per pitfall)", paper.Name, got, want)
			}
		})
	}
}
