package locks

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/service"
)

// TestEveryLockRunsOnItsTopologies: every lock takes and gives back the
// lock once, uncontended, on each topology it is listed for, so that a
// lock whose SQL or commands one server does not speak is not offered for
// it (check -lock runs every scenario of a lock's topologies).
func TestEveryLockRunsOnItsTopologies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts every topology")
	}
	byTopology := map[cluster.Topology][]Lock{}
	for _, l := range All() {
		for _, topo := range l.Topologies {
			byTopology[topo] = append(byTopology[topo], l)
		}
	}
	for topo, ls := range byTopology {
		t.Run(string(topo), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cl, err := cluster.Start(ctx, cluster.Config{Topology: topo, Backend: local.Local{}, Service: service.LockService(topo)})
			if err != nil {
				t.Skip(err) // a server this machine lacks, as a run skips it
			}
			defer cl.Close()
			for i, l := range ls {
				c, err := harness.Connect(ctx, cl, harness.ClientOptions{ID: i, TTL: time.Second, Key: "cycle-" + l.Name, Service: service.For(topo)})
				if err != nil {
					t.Fatal(err)
				}
				lease, err := l.New(c).Acquire(ctx, "cycle-"+l.Name)
				if err == nil {
					err = lease.Release(ctx)
				}
				c.Close()
				if err != nil {
					t.Errorf("%s on %s: %v", l.Name, topo, err)
				}
			}
		})
	}
}
