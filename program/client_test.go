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
