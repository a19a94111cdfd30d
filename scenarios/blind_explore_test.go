package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/locks"
)

// exploreBlind explores one blind lock from seed, in its fault space, for
// at most runs runs or d (one of them 0), and stops at its first bug.
func exploreBlind(t testing.TB, i int, seed int64, runs int, d time.Duration) *explore.Report {
	t.Helper()
	l := blindLocks[i]
	rep, err := explore.Run(context.Background(), explore.Config{Lock: l.name, New: l.new,
		Reference: locks.Reference(l.topology, false).New, Topology: l.topology,
		Faults: l.faults, Runs: runs, Time: d, Seed: seed, StopAtFirst: true, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("%s, seed %d: %v", l.name, seed, err)
	}
	return rep
}

// TestExploreFindsBlindLocks: explore, knowing nothing of the locks and
// none of their scenarios, finds a failure of each one's own from seed 3,
// within 40 runs: 2 to 15 runs, 5 to 48 s on two cores, slow-redlock the
// slowest (seeds 1 to 3 found it in none, 19 and 53 s;
// BenchmarkBlindFirstOwn gives each lock's median over seeds 1 to 3, with a
// minute's cap). A count of runs, not a time, bounds it, so that a loaded
// machine makes as many of the seed's plans as an idle one.
func TestExploreFindsBlindLocks(t *testing.T) {
	if testing.Short() {
		t.Skip("explores each lock for up to 40 runs")
	}
	t.Parallel()
	for i, l := range blindLocks {
		t.Run(l.name, func(t *testing.T) {
			// An exploration mostly waits on leases and timers: two at a
			// time (GOMAXPROCS on two cores) halve the wall time, and a
			// run the load stalls is unknown, not a verdict.
			t.Parallel()
			if l.name == "slow-redlock" && os.Getenv("LOCKLAB_ACCEPTANCE") == "" {
				// Found on seeds 2 and 3 in 19 to 53 s, but not on every
				// run while a paused node counted as a stall of every client.
				// Since overlaps are judged node by node it was found from
				// seed 3 in 43 s and 15 runs at load 40 on two cores, once:
				// it stays in make acceptance until it is found on every run.
				t.Skip("not found on every run yet; make acceptance runs it (LOCKLAB_ACCEPTANCE=1)")
			}
			rep := exploreBlind(t, i, 3, 40, 0)
			if rep.FirstOwnS == nil {
				t.Fatalf("no failure of the lock's own in %d runs (inherent %d, untold %d)", rep.Runs, rep.Inherent, rep.Untold)
			}
			sig := rep.Bugs[0].Signature
			t.Logf("found after %.1f s and %d runs: %s (%s); replay %s", *rep.FirstOwnS, rep.Runs, sig, rep.First.Plan, rep.Replay)
			if !slices.ContainsFunc(l.finds, func(f string) bool { return strings.Contains(sig, f) }) {
				t.Errorf("the bug found, %q, names none of %q: explore found another bug than the one the lock was written with", sig, l.finds)
			}
		})
	}
}

// BenchmarkBlindFirstOwn is how long explore takes to find each blind
// lock: for seeds 1 to b.N, the seconds to its first own violation (at
// most a minute each) and the runs that took, and their median.
func BenchmarkBlindFirstOwn(b *testing.B) {
	for i, l := range blindLocks {
		b.Run(l.name, func(b *testing.B) {
			var secs []float64
			var row []string
			for n := range b.N {
				rep := exploreBlind(b, i, int64(n+1), 0, time.Minute)
				if rep.FirstOwnS == nil {
					row = append(row, fmt.Sprintf("none in %d runs", rep.Runs))
					secs = append(secs, 60)
					continue
				}
				row = append(row, fmt.Sprintf("%.0f s (%d runs)", *rep.FirstOwnS, rep.Runs))
				secs = append(secs, *rep.FirstOwnS)
			}
			slices.Sort(secs)
			b.Logf("| %s | 1-%d | %s |", l.name, b.N, strings.Join(row, ", "))
			b.ReportMetric(secs[len(secs)/2], "s-to-own")
		})
	}
}
