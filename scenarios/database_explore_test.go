package scenarios_test

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/scenarios"
)

// TestExploreFindsDatabaseLocks: explore, told nothing but the lock and
// its topology, finds the bug of each broken lock of a database pitfall
// whose failure is the lock's own: its first bug, or the next one
// when the lock has others, fails, as the lock's own, a checker with the
// verdict the catalogue names. (A pitfall whose failure is inherent is one explore
// rightly calls inherent: the reference lock fails too.)
func TestExploreFindsDatabaseLocks(t *testing.T) {
	if testing.Short() {
		t.Skip("explores each lock for up to two minutes")
	}
	t.Parallel()
	for _, l := range locks.All() {
		if l.Pitfall == "" || l.Topologies[0].Service() == cluster.Redis {
			continue
		}
		found, err := pitfalls.Lookup(l.Pitfall)
		if err != nil {
			t.Fatal(err)
		}
		p := found[0]
		if p.Kind != check.Own {
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
			ref := l.ReferenceOn(l.Topologies[0])
			explored := func(stopAfter int) *explore.Report {
				rep, err := explore.Run(context.Background(), explore.Config{Lock: l.Name, New: l.New, Topology: l.Topologies[0],
					Reference: ref.New, SelfReference: ref.Name == l.Name,
					Nested: l.Nested, Time: 2 * time.Minute, Seed: 3, Parallel: 2, StopAfter: stopAfter, Dir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				if rep.FirstOwnS == nil {
					t.Fatalf("no failure of the lock's own in %d runs (inherent %d, untold %d, unknown %d)", rep.Runs, rep.Inherent, rep.Untold, rep.Unknown)
				}
				return rep
			}
			// A broken lock may show its bug in more checks than the
			// catalogue names; one of them must be the catalogue's, and own.
			catalogued := func(b explore.Bug) bool {
				for _, c := range b.Found.Checks {
					if want, ok := p.Catches[c.Checker]; ok && c.Verdict == want && c.Kind == check.Own {
						return true
					}
				}
				return false
			}
			rep := explored(1)
			b := rep.Bugs[0]
			t.Logf("found after %.1f s and %d runs: %s (%s)", *rep.FirstOwnS, rep.Runs, b.Signature, rep.First.Plan)
			if catalogued(b) {
				return
			}
			// A lock may have more than the catalogue's bug (GET_LOCK on
			// a pool also dies with a reset connection), and which comes
			// first depends on the machine's timing: the catalogue's must
			// then come next.
			t.Logf("not the catalogue's %v; exploring on for more bugs", p.Catches)
			more := explored(2)
			for _, b := range more.Bugs {
				t.Logf("bug: %s", b.Signature)
				if catalogued(b) {
					return
				}
			}
			t.Errorf("of the bugs found, none shows the catalogue's %v as own; the first, %q: %v", p.Catches, b.Signature, b.Found.Checks)
		})
	}
}
