package harness_test

import (
	"context"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/service"
)

// BenchmarkStartSingle is the start-up and tear-down of the single topology:
// the lock node, the inventory node and the network.
func BenchmarkStartSingle(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		c, err := cluster.Start(ctx, cluster.Config{Topology: cluster.Single, Backend: local.Local{}, Service: service.LockService(cluster.Single)})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcquireRelease is one acquire+release of the correct lock, dialing
// the node directly and through the client's toxiproxy link. On the 2-core
// 2-core CI machine, shared and loaded, medians of 30 runs of 3000: direct
// 95 µs, link 134 µs, 1.4× (it was 108 / 279 µs, 2.6×, before the link
// copied its own connections, network/pump.go). What is left is the
// second TCP hop: two more writes and reads per command.
func BenchmarkAcquireRelease(b *testing.B) {
	ctx := context.Background()
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.Single, Backend: local.Local{}, Service: service.LockService(cluster.Single)})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	// -count reruns each subbenchmark on this cluster, and a client's link
	// outlives it: each run needs a client number of its own.
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
			lock := reference.NewTokenLock(c)
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
