package compare

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/suite"
)

// brokenBackend fails every run as it starts, as a server that will not
// come up does.
type brokenBackend struct{}

func (brokenBackend) Name() string                      { return "broken" }
func (brokenBackend) Ready(context.Context, bool) error { return nil }
func (brokenBackend) StartRun(context.Context) (cluster.RunSession, error) {
	return nil, errors.New("no server today")
}

// TestRunNotMade: runs that fail make a cell "not made", unknown, with the
// error, and each of its runs links a page that exists.
func TestRunNotMade(t *testing.T) {
	out := t.TempDir()
	opts := Options{Suite: suite.Options{Out: out, Backend: brokenBackend{}, KeepGoing: true},
		Locks: []string{"token-watchdog"}, Classes: []string{Pause}, Runs: 2}
	tab, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	c := tab.Rows[0].Cells[0]
	if c.Text != "not made 2/2" || c.Verdict != string(checker.Unknown) || !strings.Contains(c.Why, "no server today") || len(c.Runs) != 2 {
		t.Fatalf("cell %+v; want not made 2/2, unknown, with the error, two runs", c)
	}
	for _, r := range c.Runs {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(r.Page))); r.Page == "" || err != nil {
			t.Errorf("run %d: page %q: %v", r.Run, r.Page, err)
		}
	}
}
