package harness

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
)

// TestEtcdService: on the etcd topology a client reaches the members
// through its own links and has no Redis; a lease its session keeps alive
// outlives its TTL, and expires once the client is paused past it, since
// a paused client's connections send nothing, its keep-alives included.
// The lock's state reads as a Redis PTTL does.
func TestEtcdService(t *testing.T) {
	ctx := context.Background()
	if _, err := local.EtcdPath(); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.EtcdTopology, Backend: local.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := Connect(ctx, cl, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Redis() != nil || c.Etcd() == nil {
		t.Fatalf("Redis %v, Etcd %v: want only etcd on the etcd topology", c.Redis(), c.Etcd())
	}
	for _, ep := range c.Etcd().Endpoints() {
		for _, n := range cl.LockNodes() {
			if ep == n.Addr() {
				t.Errorf("the client dials member %s directly, not through its link", n.Name())
			}
		}
	}
	s, err := concurrency.NewSession(c.Etcd(), concurrency.WithTTL(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := cluster.EtcdKeyPrefix + "k/me"
	if _, err := c.Etcd().Put(ctx, key, "", clientv3.WithLease(s.Lease())); err != nil {
		t.Fatal(err)
	}
	// etcd tells a lease's time left in whole seconds, rounded down.
	if got, err := cl.LockState(ctx, "k"); err != nil || got < 0 || got > time.Second {
		t.Fatalf("lock state %v, %v; want up to 1 s", got, err)
	}
	// Kept alive, the key outlives two TTLs: the time passing is the test.
	time.Sleep(2 * time.Second)
	if got, err := cl.LockState(ctx, "k"); err != nil || got < 0 {
		t.Fatalf("after 2 s kept alive: lock state %v, %v; want the key", got, err)
	}
	// Paused for 2.5 s, the client's keep-alives stop: etcd revokes the
	// lease and deletes the key.
	if err := c.Pause(ctx, 2500*time.Millisecond, "test"); err != nil {
		t.Fatal(err)
	}
	if got, err := cl.LockState(ctx, "k"); err != nil || got != -2 {
		t.Errorf("after a pause past the lease: lock state %v, %v; want -2 (no key)", got, err)
	}
}
