package zookeeper_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/service/zookeeper"
)

// bare is a backend whose runs cannot start ZooKeeper.
type bare struct{}

func (bare) Name() string                                         { return "stub" }
func (bare) Ready(context.Context, bool) error                    { return nil }
func (bare) StartRun(context.Context) (cluster.RunSession, error) { return bareRun{}, nil }

// bareRun starts nothing: not ZooKeeper, whose absence Start must report
// as such, and no node (the inventory starts beside the topology).
type bareRun struct{ cluster.RunSession }

func (bareRun) Name() string { return "stub" }
func (bareRun) Close() error { return nil }
func (bareRun) StartNode(context.Context, cluster.NodeConfig) (cluster.Node, error) {
	return nil, errors.New("the stub starts no node")
}

// TestNeedsAStarter: on a backend whose runs cannot start ZooKeeper, the
// zookeeper topology fails at start with ErrNoZooKeeper, which a suite
// skips as a missing server.
func TestNeedsAStarter(t *testing.T) {
	_, err := cluster.Start(t.Context(), cluster.Config{Topology: cluster.ZooKeeperTopology, Backend: bare{}, Service: zookeeper.Service{}})
	if !errors.Is(err, zookeeper.ErrNoZooKeeper) {
		t.Fatalf("Start = %v, want ErrNoZooKeeper", err)
	}
}

// TestUnrelayed: a lock program on ZooKeeper is told why no relay strikes
// its requests.
func TestUnrelayed(t *testing.T) {
	if why := (zookeeper.Service{}).Unrelayed(); !strings.Contains(why, "jute") {
		t.Errorf("unrelayed %q: want the reason, jute", why)
	}
}
