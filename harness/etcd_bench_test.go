package harness_test

import (
	"context"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/reference"
)

// BenchmarkStartEtcd is the start-up and tear-down of the etcd topology:
// three members until they have a leader, the inventory node and the
// network.
func BenchmarkStartEtcd(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		c, err := cluster.Start(ctx, cluster.Config{Topology: cluster.EtcdTopology, Backend: local.Local{}})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEtcdMutexCycle is one acquire+release of concurrency.Mutex on
// the etcd topology, uncontended: grant a lease, start its keep-alive,
// lock (one transaction), unlock (a delete) and revoke the lease: four
// round trips, each committed by Raft on two of three members, directly
// and through the client's links.
func BenchmarkEtcdMutexCycle(b *testing.B) {
	ctx := context.Background()
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.EtcdTopology, Backend: local.Local{}})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	id := 0
	for _, direct := range []bool{true, false} {
		name := "link"
		if direct {
			name = "direct"
		}
		b.Run(name, func(b *testing.B) {
			id++
			c, err := harness.Connect(ctx, cl, harness.ClientOptions{ID: id, Direct: direct})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			lock := reference.NewEtcdMutex(c)
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
