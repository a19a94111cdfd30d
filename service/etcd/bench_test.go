package etcd_test

import (
	"context"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/service/etcd"
)

// BenchmarkStartEtcd is the start-up and tear-down of the etcd topology:
// three members until they have a leader, the inventory node and the
// network.
func BenchmarkStartEtcd(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		c, err := cluster.Start(ctx, cluster.Config{Topology: cluster.EtcdTopology, Backend: local.Local{}, Service: etcd.Service{}})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
