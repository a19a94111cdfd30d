package scenarios_test

import (
	"context"
	"slices"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/scenarios"
)

// TestExploreFindsDatabaseLocks: explore, told nothing but the lock and
// its topology, finds the bug of each broken lock of a database pitfall
// whose failure is the lock's own: one of its bugs fails, as the lock's
// own, a checker with the verdict the catalogue names. (A pitfall whose
// failure is inherent is one explore rightly calls inherent: the reference
// lock fails too.)
func TestExploreFindsDatabaseLocks(t *testing.T) {
	if testing.Short() {
		t.Skip("explores each lock for up to 50 runs")
	}
	t.Parallel()
	for _, l := range locks.All() {
		p, ok := l.Bug()
		if !ok || l.Topologies[0].Service() == cluster.Redis {
			continue
		}
		if s, err := scenarios.Lookup(p.Scenario); err != nil {
			t.Fatal(err)
		} else if s.Workload.Pool > 0 {
			// Explore draws faults on clients with pools of their own; a
			// service's shared pool is a shape of the workload it does
			// not draw yet.
			continue
		}
		t.Run(l.Name, func(t *testing.T) {
			t.Parallel()
			// A broken lock may show its bug in more checks than the
			// catalogue names, and may have more bugs than the catalogue's
			// (GET_LOCK on a pool also dies with a reset connection), which
			// of them comes first depending on the machine's timing: the
			// exploration goes on until one of its bugs fails the
			// catalogue's check with the catalogue's verdict, as own.
			catalogued := func(b explore.Bug) bool {
				for _, c := range b.Found.Checks {
					if want, ok := p.Catches[c.Checker]; ok && c.Verdict == want && c.Kind == checker.Own {
						return true
					}
				}
				return false
			}
			// A count of runs, not a time, bounds it, so that a loaded
			// machine makes as many of seed 3's plans as an idle one; the
			// pool locks' first busy pools come in its runs 9 to 21.
			ref := l.ReferenceOn(l.Topologies[0])
			rep, err := explore.Run(context.Background(), explore.Config{Lock: l.Name, New: l.New, Topology: l.Topologies[0],
				Reference: ref.New, SelfReference: ref.Name == l.Name,
				Nested: l.Nested, Runs: 50, Seed: 3, Parallel: 2, StopWhen: catalogued, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range rep.Bugs {
				t.Logf("bug after %.1f s and %d runs: %s (%s)", b.FirstS, b.FirstRun+1, b.Signature, b.Plan)
			}
			if !slices.ContainsFunc(rep.Bugs, catalogued) {
				t.Errorf("none of %d bugs shows the catalogue's %v as own, in %d runs (inherent %d, untold %d, unknown %d, flaky %d, made again %d)",
					len(rep.Bugs), p.Catches, rep.Runs, rep.Inherent, rep.Untold, rep.Unknown, rep.Flaky, rep.Again)
			}
		})
	}
}
