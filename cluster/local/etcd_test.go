package local

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/service/etcd"
)

// TestEtcdTopology starts the etcd topology, writes through the cluster,
// kills its leader and restarts it with its data: the write survives, a
// new leader is elected, and the restarted member rejoins. Nothing is left
// after Close.
func TestEtcdTopology(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.EtcdTopology, Backend: Local{}, Service: etcd.Service{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd topology (3 members and the inventory) started in %s", time.Since(start).Round(time.Millisecond))
	defer func() {
		if err := cl.Close(); err != nil {
			t.Error(err)
		}
	}()
	set := etcd.SetOf(cl)
	if _, err := set.Admin().Put(ctx, "/probe", "1"); err != nil {
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
	if err := waitNewLeader(ctx, cl, i); err != nil {
		t.Fatal(err)
	}
	t.Logf("new leader %s after the kill", time.Since(killed).Round(time.Millisecond))
	if err := leader.Restart(ctx, true); err != nil {
		t.Fatal(err)
	}
	resp, err := set.Admin().Get(ctx, "/probe")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the write did not survive the leader's kill: %v %v", resp, err)
	}
	if st, err := cl.LockState(ctx, "lock"); err != nil || st.Held {
		t.Fatalf("LockState with no lock = %v, %v; want free", st, err)
	}
}

// waitNewLeader waits until a majority names a leader other than member old.
func waitNewLeader(ctx context.Context, cl *cluster.Cluster, old int) error {
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
		case <-time.After(10 * time.Millisecond):
		}
	}
}
