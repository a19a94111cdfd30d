package zookeeper_test

import (
	"context"
	"errors"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
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

// TestRelayed: a lock program on ZooKeeper is relayed: its
// LOCKLAB_ZOOKEEPER names addresses a relay reads.
func TestRelayed(t *testing.T) {
	if why := (harness.Endpoints{Env: []string{"LOCKLAB_ZOOKEEPER=127.0.0.1:1", "LOCKLAB_SESSION_MS=300"}}).Unrelayed(); why != "" {
		t.Errorf("a program on ZooKeeper is unrelayed: %q", why)
	}
}
