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
)

// joinTopology starts topology on local processes and joins client id to
// it, with a 300 ms TTL and timeout as its Redis timeout; both end with the
// test. A machine without etcd or MariaDB skips the test.
func joinTopology(t *testing.T, topology cluster.Topology, id int, timeout time.Duration) (*cluster.Cluster, *harness.Client, []*network.Link) {
	t.Helper()
	ctx := context.Background()
	cl, err := cluster.Start(ctx, cluster.Config{Topology: topology, Backend: local.Local{}, Service: service.LockService(topology)})
	if errors.Is(err, etcd.ErrNoEtcd) || errors.Is(err, local.ErrNoMariaDB) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	h, _ := history.New("")
	c, links, err := harness.Join(ctx, cl, harness.ClientOptions{ID: id, TTL: 300 * time.Millisecond, Timeout: timeout, Service: service.For(topology)}, h, failpoint.NewSet(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return cl, c, links
}
