package reports

import (
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
