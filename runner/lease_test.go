package runner_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/runner"
)

// TestRunTimedAgainstAGivenLease: a Go lock given a lease twice the
// scenario's TTL is run on the scenario stretched to it: its clients are
// told the lease, the slow work that outlasted the TTL outlasts the lease
// (the token lock, no renewal, is illegal), and the result says so. With
// no lease given, a Go lock's result says nothing of its timing.
func TestRunTimedAgainstAGivenLease(t *testing.T) {
	s := runner.Scenario{
		Name:     "slow",
		Workload: runner.Workload{TTL: 150 * time.Millisecond, Work: 5 * time.Millisecond, Duration: 300 * time.Millisecond},
		Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Client: 0, Skip: 1,
			Action: failpoint.Sleep(450 * time.Millisecond), Crux: true}},
	}
	for _, tc := range []struct {
		name  string
		lease *footprint.Lease
		ttl   time.Duration
		text  string
	}{
		{"given", footprint.GivenLease(300 * time.Millisecond), 300 * time.Millisecond,
			"timed against the given lease 300 ms: the scenario's 150 ms stretched 2×"},
		{"none", nil, 150 * time.Millisecond, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := runner.Run(context.Background(), s, reference.NewTokenLock, runner.Options{Dir: dir, Lease: tc.lease, ReferenceRuns: -1})
			if err != nil {
				t.Fatal(err)
			}
			ops, err := history.ReadFile(filepath.Join(dir, runner.HistoryFile))
			if err != nil {
				t.Fatal(err)
			}
			if e := history.EndOf(ops); e == nil || e.TTL != tc.ttl {
				t.Errorf("the clients were told %v, want %s", e, tc.ttl)
			}
			switch {
			case tc.text == "" && res.Timing != nil:
				t.Errorf("timing %+v, want none for a Go lock given no lease", res.Timing)
			case tc.text != "" && (res.Timing == nil || res.Timing.Text != tc.text || res.Timing.Source != runner.TimedGiven):
				t.Errorf("timing %+v, want %q", res.Timing, tc.text)
			}
			if v := res.Verdicts[checker.CheckLock]; v != checker.Illegal && v != checker.Unknown {
				t.Errorf("lock %s: the slow work outlasted the lease", v)
			}
		})
	}
}
