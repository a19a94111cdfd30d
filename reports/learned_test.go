package reports

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/runner"
)

// TestRunPageSaysWhatWasLearned: the run page says what the lock's own
// requests showed of it, as the history's end records it.
func TestRunPageSaysWhatWasLearned(t *testing.T) {
	dir := t.TempDir()
	h, err := history.New(filepath.Join(dir, runner.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	fp := footprint.Footprint{Key: "app:lock", Lease: time.Second, Kind: footprint.Data, From: "SET app:lock … PX 1000 NX"}
	h.Add(history.Op{Client: -1, Kind: history.KindEnd, End: &history.End{Footprint: &fp, Ambiguous: []string{"two leases"}}})
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	st := readStory(Run{ReportDir: dir, Result: &runner.Result{}})
	if !strings.Contains(st.learned, "app:lock") || !strings.Contains(st.learned, "1000 ms") || len(st.ambiguous) != 1 {
		t.Errorf("learned %q, ambiguous %q", st.learned, st.ambiguous)
	}
}

// TestRunPageSaysWhatItWasTimedAgainst: the run page says what the run's
// faults were timed against, from its result, and says nothing of it for
// a run that has no timing to tell (a Go lock, told its TTL).
func TestRunPageSaysWhatItWasTimedAgainst(t *testing.T) {
	const text = "timed against the learned lease 1000 ms (from SET app:lock … PX 1000 NX): the scenario's 200 ms stretched 5×"
	for _, tc := range []struct {
		name   string
		timing *runner.Timing
		want   string
	}{
		{"learned", &runner.Timing{Lease: time.Second, Stretch: 5, Source: runner.TimedLearned, Text: text}, "Timing: " + text},
		{"a Go lock", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := Run{Lock: "x", Scenario: "pause-holder", ReportDir: filepath.Join(dir, "x-pause-holder"),
				Result: &runner.Result{Scenario: "pause-holder", Timing: tc.timing}}
			if err := os.MkdirAll(r.ReportDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := writeRunPage(dir, r, variant{}, runStory{}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(r.ReportDir, RunPageFile))
			if err != nil {
				t.Fatal(err)
			}
			page := html.UnescapeString(string(b))
			if tc.want != "" && !strings.Contains(page, tc.want) || tc.want == "" && strings.Contains(page, "Timing:") {
				t.Errorf("the page does not say %q:\n%s", tc.want, page)
			}
		})
	}
}
