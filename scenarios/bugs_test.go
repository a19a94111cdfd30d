package scenarios_test

import (
	"context"
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
)

// The two bugs of blindLock{fallbackDel: true}, and the faults a signature
// may name for each: the words of the fault kinds that make them run.
var twoBugs = []struct {
	bug    string
	faults []string
}{
	// No renewal: a holder whose work, or one of whose commands, outlasts
	// the TTL while the client keeps running.
	{"no renewal", []string{"slow work in critical section", "delay "}},
	// A plain DEL after a release that got no reply: the reply lost, or
	// held back by a black hole until the client timed out.
	{"plain DEL after a lost release reply", []string{"lost reply of release command", "black hole"}},
}

// TestExploreFindsTwoBugs: explore, knowing nothing of the lock, finds both
// bugs of a lock that has two independent ones, each as a distinct bug
// whose signature names a fault that makes that bug run. The lost release
// reply is drawn as its own kind (drop-release), with a release command
// after it held until another client acquires, so the fallback DEL strikes
// a holder; seed 9 draws it in one run in six or seven.
func TestExploreFindsTwoBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("explores for up to 30 runs")
	}
	t.Parallel() // with the blind explorations: see TestExploreFindsBlindLocks
	rep, err := explore.Run(context.Background(), explore.Config{
		Lock:      "blind-fallback-del",
		New:       func(c *harness.Client) harness.Locker { return &blindLock{c: c, fallbackDel: true} },
		Reference: locks.Reference(cluster.Single, false).New,
		Topology:  cluster.Single,
		Runs:      30, // not a time, so that a loaded machine makes as many plans
		StopAfter: len(twoBugs),
		Seed:      9,
		Dir:       t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d runs in %.0f s (%.1f runs/min), own %d, inherent %d, untold %d, flaky %d",
		rep.Runs, rep.WallS, rep.RunsPerMin, rep.Own, rep.Inherent, rep.Untold, rep.Flaky)
	found := make([]bool, len(twoBugs))
	for _, b := range rep.Bugs {
		t.Logf("%s: first after %.1f s, %d runs, replay %s", b.Signature, b.FirstS, b.Runs, b.Replay)
		_, faults, _ := strings.Cut(b.Signature, " · ")
		for _, fault := range strings.Split(faults, " + ") {
			named := false
			for i, known := range twoBugs {
				for _, f := range known.faults {
					if strings.HasPrefix(fault, f) {
						found[i], named = true, true
					}
				}
			}
			if !named {
				t.Errorf("bug %q: %q makes neither of the lock's bugs run", b.Signature, fault)
			}
		}
	}
	for i, known := range twoBugs {
		if !found[i] {
			t.Errorf("%s: not found in %d runs", known.bug, rep.Runs)
		}
	}
	if len(rep.Bugs) < 2 {
		t.Errorf("%d distinct bugs, want at least 2", len(rep.Bugs))
	}
}
