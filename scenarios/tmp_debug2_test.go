package scenarios_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
)

func TestTmpDebug2(t *testing.T) {
	name := os.Getenv("L")
	seed, _ := strconv.ParseInt(os.Getenv("S"), 10, 64)
	for _, l := range append(blindLocks, struct{name string; topology cluster.Topology; new harness.NewLocker}{"ref", cluster.Single, locks.Reference(cluster.Single, false).New}) {
		if l.name != name {
			continue
		}
		space, _ := explore.NewSpace([]string{os.Getenv("F")})
		p := space.Schedule(l.topology, false, seed)
		t.Log(p)
		res, err := harness.Run(context.Background(), p.Scenario(), l.new, harness.Options{Seed: seed, Dir: "/tmp/dbg2", Reference: locks.Reference(l.topology, false).New})
		t.Log(err)
		for _, c := range res.Checks {
			t.Logf("%s %s %s: %s | %s", c.Checker, c.Verdict, c.Kind, c.Detail, c.KindWhy)
		}
		_ = cluster.Single
	}
}
