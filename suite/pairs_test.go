package suite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/runner"
)

// TestPairsRefuses: an unknown lock or scenario, a lock off the scenario's
// topology, or nothing to run is refused before any run, and nothing is
// written.
func TestPairsRefuses(t *testing.T) {
	for _, pairs := range [][]Pair{
		{{Lock: "no-such-lock", Scenario: "pause-holder"}},
		{{Lock: "token", Scenario: "no-such-scenario"}},
		{{Lock: "etcd-mutex", Scenario: "pause-holder"}},
		nil,
	} {
		out := t.TempDir()
		if _, err := Pairs(context.Background(), pairs, Options{Out: out}); err == nil {
			t.Errorf("Pairs(%v) = nil error, want a refusal", pairs)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("Pairs(%v) wrote %d entries", pairs, len(entries))
		}
	}
}

// brokenBackend fails every run as it starts, as a server that will not
// come up does.
type brokenBackend struct{}

func (brokenBackend) Name() string                      { return "broken" }
func (brokenBackend) Ready(context.Context, bool) error { return nil }
func (brokenBackend) StartRun(context.Context) (cluster.RunSession, error) {
	return nil, errors.New("no server today\nlog tail")
}

// TestPairsKeepGoing: with KeepGoing, a run that fails is a skipped run
// with the error's first line, and the runs after it are still made; run
// k of a pair has its own folder and the seed plus k-1. Without it the
// first error stops the suite.
func TestPairsKeepGoing(t *testing.T) {
	pairs := []Pair{{Lock: "token", Scenario: "contention"}, {Lock: "token", Scenario: "contention", Run: 2}}
	out := t.TempDir()
	runs, err := Pairs(context.Background(), pairs, Options{Out: out, Seed: 5, Backend: brokenBackend{}, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for i, r := range runs {
		if !strings.HasPrefix(r.Skipped, "the run failed: ") || strings.Contains(r.Skipped, "\n") || !strings.Contains(r.Skipped, "no server today") {
			t.Errorf("run %d: skipped %q; want the error's first line", i+1, r.Skipped)
		}
		if r.Seed != int64(5+i) {
			t.Errorf("run %d: seed %d, want %d", i+1, r.Seed, 5+i)
		}
	}
	if filepath.Base(runs[0].ReportDir) != "token-contention" || filepath.Base(runs[1].ReportDir) != "token-contention-run2" {
		t.Errorf("folders %s and %s", runs[0].ReportDir, runs[1].ReportDir)
	}
	if _, err := Pairs(context.Background(), pairs, Options{Out: t.TempDir(), Backend: brokenBackend{}}); err == nil {
		t.Error("without KeepGoing: nil error, want the run's")
	}
}

// TestLongestFirst: runs start longest planned workload first, ties in
// the order given, and a -duration for all leaves the TTLs to decide.
func TestLongestFirst(t *testing.T) {
	planned := func(d, ttl time.Duration) job {
		return job{scenario: runner.Scenario{Workload: runner.Workload{Duration: d, TTL: ttl}}}
	}
	todo := []job{planned(1500*time.Millisecond, 200*time.Millisecond), planned(6*time.Second, 6*time.Second),
		planned(1500*time.Millisecond, 200*time.Millisecond), planned(3*time.Second, 2*time.Second)}
	if got, want := longestFirst(todo, 0), []int{1, 3, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if got, want := longestFirst(todo, time.Second), []int{1, 3, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("with a duration for all: order %v, want %v", got, want)
	}
	// The run that learns the lease comes first, and every run once.
	todo[2].first = true
	if got, want := longestFirst(todo, 0), []int{2, 1, 3, 0}; !slices.Equal(got, want) {
		t.Errorf("with a run that learns the lease: order %v, want %v", got, want)
	}
}
