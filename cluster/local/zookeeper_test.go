package local

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster"
)

// TestZooKeeperTopology starts the zookeeper topology, writes through the
// ensemble, kills its leader and restarts it with its data: the write
// survives, a new leader is elected, and the restarted server rejoins.
// Nothing is left after Close.
func TestZooKeeperTopology(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.ZooKeeperTopology, Backend: Local{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("zookeeper topology (3 servers and the inventory) started in %s", time.Since(start).Round(time.Millisecond))
	defer func() {
		if err := cl.Close(); err != nil {
			t.Error(err)
		}
	}()
	admin := cl.ZooKeeperEnsemble().Admin()
	if _, err := admin.Create("/probe", []byte("1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	leader, i, err := cl.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := waitNewZKLeader(ctx, cl, i); err != nil {
		t.Fatal(err)
	}
	t.Logf("new leader %s after the kill", time.Since(killed).Round(time.Millisecond))
	restarted := time.Now()
	if err := leader.Restart(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("the old leader rejoined %s after its restart", time.Since(restarted).Round(time.Millisecond))
	if data, _, err := admin.Get("/probe"); err != nil || string(data) != "1" {
		t.Fatalf("the write did not survive the leader's kill: %q %v", data, err)
	}
	if st, err := cl.LockState(ctx, "lock"); err != nil || st != -2 {
		t.Fatalf("LockState with no lock = %v, %v; want -2", st, err)
	}
}

// waitNewZKLeader waits until a server other than old leads a quorum.
func waitNewZKLeader(ctx context.Context, cl *cluster.Cluster, old int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		_, i, err := cl.Leader(ctx)
		if err == nil && i != old {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}
