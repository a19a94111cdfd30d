package zookeeper_test

import (
	"context"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/service/zookeeper"
)

// BenchmarkStartZooKeeper is the start-up and tear-down of the zookeeper
// topology: three servers until one leads a quorum, the inventory node and
// the network.
func BenchmarkStartZooKeeper(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		c, err := cluster.Start(ctx, cluster.Config{Topology: cluster.ZooKeeperTopology, Backend: local.Local{}, Service: zookeeper.Service{}})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
