package cluster

import (
	"context"
	"errors"
	"testing"
)

// TestZooKeeperNeedsAStarter: on a backend whose runs cannot start
// ZooKeeper, the zookeeper topology fails at start with
// ErrNoZooKeeper, which a suite skips as a missing server.
func TestZooKeeperNeedsAStarter(t *testing.T) {
	_, err := Start(t.Context(), Config{Topology: ZooKeeperTopology, Backend: bare{}})
	if !errors.Is(err, ErrNoZooKeeper) {
		t.Fatalf("Start = %v, want ErrNoZooKeeper", err)
	}
}

// bare is a backend whose runs start no service of their own: not
// ZooKeeper, nor etcd.
type bare struct{}

func (bare) Name() string                                 { return "stub" }
func (bare) Ready(context.Context, bool) error            { return nil }
func (bare) StartRun(context.Context) (RunSession, error) { return bareRun{}, nil }

// bareRun starts nothing: no consensus service, whose absence Start
// must report as such, and no node (the inventory starts beside the topology).
type bareRun struct{ RunSession }

func (bareRun) Name() string { return "stub" }
func (bareRun) Close() error { return nil }
func (bareRun) StartNode(context.Context, NodeConfig) (Node, error) {
	return nil, errors.New("the stub starts no node")
}
