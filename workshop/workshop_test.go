package workshop

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/pitfalls"
)

// golden is a report folder of real runs, kept by package reports.
const golden = "../reports/testdata/report"

// from is the report folder the tests write a workshop from: golden, or
// LOCKLAB_WORKSHOP_FROM (a whole catalogue's report) when set.
func from() string {
	if d := os.Getenv("LOCKLAB_WORKSHOP_FROM"); d != "" {
		return d
	}
	return golden
}

// TestWrite writes a workshop and checks its pages: one predict page per
// pitfall, drawn when its broken run is there, the answer folded under
// the question; and every link inside the folder resolves.
func TestWrite(t *testing.T) {
	out := t.TempDir()
	w, err := Write(Options{From: from(), Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(w.Predict), len(pitfalls.Catalogue()); got != want {
		t.Fatalf("%d predict pages, want one per pitfall, %d", got, want)
	}
	b, err := os.ReadFile(filepath.Join(out, ClassDir, "predict", "5-del-release.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	q := strings.Index(page, "Which checker fails")
	d := strings.Index(page, "<details>")
	a := strings.Index(page, "two clients believed they held the lock at once")
	if a < 0 {
		a = strings.Index(page, "acquired &#34;")
	}
	if q < 0 || d < q || a < d || !strings.Contains(page, `class="timeline"`) || !strings.Contains(page, ".Del(ctx, l.key)") {
		t.Errorf("del-release's page: question at %d, <details> at %d, the lock checker's answer at %d; want them in that order, with the code and a timeline", q, d, a)
	}
	// The answer names what let the second holder in: the paused client's
	// late release, which deleted the next holder's key.
	if c := strings.Index(page, `class="cause"`); c < d || !strings.Contains(page[c:], "client 0&#39;s late release") {
		t.Errorf("del-release's answer names no cause, or not client 0's late release (cause at %d, <details> at %d)", c, d)
	}
	checkLinks(t, out)
}

// checkLinks fails for every relative link of a page under dir that names
// no file.
func checkLinks(t *testing.T, dir string) {
	t.Helper()
	href := regexp.MustCompile(`href="([^"#]+)"`)
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range href.FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], "://") {
				t.Errorf("%s links outside the folder: %s", path, m[1])
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), m[1])); err != nil {
				t.Errorf("%s: broken link %s", path, m[1])
			}
		}
		return nil
	})
}
