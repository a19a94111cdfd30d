package program

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/service/etcd"
	"github.com/locklab/locklab/service/zookeeper"
)

// joinTopology starts topology on local processes and joins client id to
// it, with a 300 ms TTL and timeout as its Redis timeout; both end with the
// test. A machine without etcd or MariaDB skips the test.
func joinTopology(t *testing.T, topology cluster.Topology, id int, timeout time.Duration) (*cluster.Cluster, *harness.Client, []*network.Link) {
	t.Helper()
	ctx := context.Background()
	cl := startTopology(t, topology)
	h, _ := history.New("")
	c, links, err := harness.Join(ctx, cl, harness.ClientOptions{ID: id, TTL: 300 * time.Millisecond, Timeout: timeout, Service: service.For(topology)}, h, failpoint.NewSet(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return cl, c, links
}

// startTopology starts topology on local processes, or skips when its
// servers are not installed; it ends with the test.
func startTopology(t *testing.T, topology cluster.Topology) *cluster.Cluster {
	t.Helper()
	cl, err := cluster.Start(context.Background(), cluster.Config{Topology: topology, Backend: local.Local{}, Service: service.LockService(topology)})
	if errors.Is(err, etcd.ErrNoEtcd) || errors.Is(err, zookeeper.ErrNoZooKeeper) || errors.Is(err, local.ErrNoMariaDB) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// joinService joins client id to cl's service, struck by points, with a
// TTL of ttl and a timeout of 500 ms, recording into h; it ends with the
// test.
func joinService(t *testing.T, cl *cluster.Cluster, id int, ttl time.Duration, points *failpoint.Set, h *history.Recorder) *harness.Client {
	t.Helper()
	c, _, err := harness.Join(context.Background(), cl, harness.ClientOptions{ID: id, TTL: ttl, Timeout: 500 * time.Millisecond, Service: service.For(cl.Topology())}, h, points)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// relayedPair runs cmd as the lock of clients 0 and 1 on topology, each
// through its relay and warm, with a crash armed at crash in client 0's
// second acquire: client 0 takes key k, client 1 is then refused, client 0
// releases it. It returns client 0's acquire, for the struck one, and the
// run's points and history.
func relayedPair(t *testing.T, topology cluster.Topology, cmd, crash string) (acquire func(key string) error, points *failpoint.Set, h *history.Recorder) {
	t.Helper()
	ctx := context.Background()
	cl := startTopology(t, topology)
	points = failpoint.NewSet([]failpoint.Point{{Name: crash, Client: 0, Skip: 1, Action: failpoint.Crash()}})
	h, _ = history.New("")
	a, b := joinService(t, cl, 0, time.Second, points, h), joinService(t, cl, 1, time.Second, points, h)
	la, lb := New(cmd)(a).(*Lock), New(cmd)(b).(*Lock)
	for _, l := range []*Lock{la, lb} {
		if l.p == nil || l.p.relay == nil {
			t.Fatalf("the program did not start with a relay: %v", l.err)
		}
		if err := l.Warm(ctx); err != nil {
			t.Fatal(err)
		}
	}
	take := func(c *harness.Client, l *Lock, key string) (harness.Lease, error) {
		actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
		defer leave()
		return l.Acquire(actx, key)
	}
	sa, err := take(a, la, "k")
	if err != nil {
		t.Fatalf("a's acquire: %v", err)
	}
	if _, err := take(b, lb, "k"); !errors.Is(err, harness.ErrNotAcquired) {
		t.Errorf("b's acquire of a held key: %v, want refused", err)
	}
	rctx, leave := a.Enter(ctx, failpoint.PhaseRelease)
	if err := sa.Release(rctx); err != nil {
		t.Errorf("a's release: %v", err)
	}
	leave()
	return func(key string) error { _, err := take(a, la, key); return err }, points, h
}
