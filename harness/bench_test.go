package harness_test

import (
	"context"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/pitfalls"
)

// BenchmarkStartSingle is the start-up and tear-down of the single topology:
// the lock node, the inventory node and the network.
func BenchmarkStartSingle(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		c, err := cluster.Start(ctx, cluster.Config{Topology: cluster.Single, Backend: local.Local{}})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcquireRelease is one acquire+release of the correct lock, dialing
// the node directly and through the client's toxiproxy link.
func BenchmarkAcquireRelease(b *testing.B) {
	ctx := context.Background()
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.Single, Backend: local.Local{}})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	for _, direct := range []bool{true, false} {
		name := "link"
		if direct {
			name = "direct"
		}
		b.Run(name, func(b *testing.B) {
			c, err := harness.Connect(ctx, cl, harness.ClientOptions{Direct: direct})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			lock := pitfalls.NewTokenLock(c)
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
