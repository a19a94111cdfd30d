package cluster

import (
	"errors"
	"testing"
)

// TestZooKeeperNeedsAStarter: on a backend whose runs cannot start
// ZooKeeper, the zookeeper topology fails at start with
// ErrNoZooKeeper, which a suite skips as a missing server.
func TestZooKeeperNeedsAStarter(t *testing.T) {
	_, err := Start(t.Context(), Config{Topology: ZooKeeperTopology, Backend: noEtcd{}})
	if !errors.Is(err, ErrNoZooKeeper) {
		t.Fatalf("Start = %v, want ErrNoZooKeeper", err)
	}
}
