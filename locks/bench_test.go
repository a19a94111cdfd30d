package locks_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/service"
)

// cycles are the locks BenchmarkLockCycle times: the correct lock of each
// family and service, and the cheapest lock (in-process) to show the floor.
var cycles = []struct {
	lock     string
	topology cluster.Topology
}{
	{"in-process", cluster.Single},
	{"token", cluster.Single},
	{"token-watchdog", cluster.Single},
	{"redlock", cluster.Redlock},
	{"unique-row", cluster.MariaDBTopology},
	{"for-update", cluster.MariaDBTopology},
	{"get-lock", cluster.MariaDBTopology},
	{"unique-row", cluster.PostgresTopology},
	{"advisory-pinned", cluster.PostgresTopology},
	{"etcd-mutex", cluster.EtcdTopology},
	{"zk-lock", cluster.ZooKeeperTopology},
	{"zk-fenced", cluster.ZooKeeperTopology},
}

// BenchmarkLockCycle is one uncontended acquire and release of each
// family's correct lock, by one client through its toxiproxy link, as a
// run makes them: what a lock costs its caller, not its throughput under
// contention.
func BenchmarkLockCycle(b *testing.B) {
	ctx := context.Background()
	for _, tc := range cycles {
		b.Run(fmt.Sprintf("%s/%s", tc.lock, tc.topology), func(b *testing.B) {
			l, err := locks.Lookup(tc.lock)
			if err != nil {
				b.Fatal(err)
			}
			cl, err := cluster.Start(ctx, cluster.Config{Topology: tc.topology, Backend: local.Local{}, Service: service.LockService(tc.topology)})
			if err != nil {
				b.Skip(err) // a missing server is a skip, as in a run
			}
			defer cl.Close()
			c, err := harness.Connect(ctx, cl, harness.ClientOptions{ID: 0, Service: service.For(tc.topology)})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			lock := l.New(c)
			for b.Loop() {
				lease, err := lock.Acquire(ctx, "bench")
				if err != nil {
					b.Fatal(err)
				}
				if err := lease.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
