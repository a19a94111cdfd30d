package etcd_test

import (
	"context"
	"errors"
	redisservice "github.com/locklab/locklab/service/redis"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	localetcd "github.com/locklab/locklab/cluster/local/etcd"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/service/etcd"
)

// start starts the etcd topology on local processes, or skips when etcd
// is not installed; it stops with the test.
func start(t *testing.T) *cluster.Cluster {
	t.Helper()
	if _, err := localetcd.Path(); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(t.Context(), cluster.Config{Topology: cluster.EtcdTopology, Backend: local.Local{}, Service: etcd.Service{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cl.Close(); err != nil {
			t.Error(err)
		}
	})
	return cl
}

// TestEtcdService: on the etcd topology a client reaches the members
// through its own links and has no Redis; a lease its session keeps alive
// outlives its TTL, and expires once the client is paused past it, since
// a paused client's connections send nothing, its keep-alives included.
// The lock's state reads as a cluster.State.
func TestEtcdService(t *testing.T) {
	ctx := context.Background()
	cl := start(t)
	c, err := harness.Connect(ctx, cl, harness.ClientOptions{Service: etcd.Service{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if redisservice.Of(c) != nil || etcd.Of(c) == nil {
		t.Fatalf("Redis %v, Etcd %v: want only etcd on the etcd topology", redisservice.Of(c), etcd.Of(c))
	}
	for _, ep := range etcd.Of(c).Endpoints() {
		for _, n := range cl.LockNodes() {
			if ep == n.Addr() {
				t.Errorf("the client dials member %s directly, not through its link", n.Name())
			}
		}
	}
	s, err := concurrency.NewSession(etcd.Of(c), concurrency.WithTTL(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := etcd.KeyPrefix + "k/me"
	if _, err := etcd.Of(c).Put(ctx, key, "", clientv3.WithLease(s.Lease())); err != nil {
		t.Fatal(err)
	}
	// etcd tells a lease's time left in whole seconds, rounded down.
	if got, err := cl.LockState(ctx, "k"); err != nil || !got.Expires || got.Left > time.Second {
		t.Fatalf("lock state %v, %v; want up to 1 s", got, err)
	}
	// Kept alive, the key outlives two TTLs: the time passing is the test.
	time.Sleep(2 * time.Second)
	if got, err := cl.LockState(ctx, "k"); err != nil || !got.Held {
		t.Fatalf("after 2 s kept alive: lock state %v, %v; want the key", got, err)
	}
	// Paused for 2.5 s, the client's keep-alives stop: etcd revokes the
	// lease and deletes the key.
	if err := c.Pause(ctx, 2500*time.Millisecond, "test"); err != nil {
		t.Fatal(err)
	}
	if got, err := cl.LockState(ctx, "k"); err != nil || got.Held {
		t.Errorf("after a pause past the lease: lock state %v, %v; want free (no key)", got, err)
	}
}

// TestEtcdRequestsStrike: an etcd lock's own requests meet the failpoints
// as Redis commands do: a dropped reply of the acquire's request that ran
// on the cluster, and a crash before the release's request, which never
// reaches it.
func TestEtcdRequestsStrike(t *testing.T) {
	ctx := context.Background()
	cl := start(t)
	h, _ := history.New("")
	points := failpoint.NewSet([]failpoint.Point{
		{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 0, Action: failpoint.DropReply()},
		{Name: failpoint.BeforeCommand(failpoint.PhaseRelease, 1), Client: 0, Action: failpoint.Crash()},
	})
	c, _, err := harness.Join(ctx, cl, harness.ClientOptions{Timeout: 200 * time.Millisecond, Service: etcd.Service{}}, h, points)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	key := etcd.KeyPrefix + "k/me"

	actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
	_, err = etcd.Of(c).Put(actx, key, "held")
	leave()
	var dropped interface{ Timeout() bool } // the harness's dropped reply reads as a timeout
	if !errors.As(err, &dropped) || !dropped.Timeout() {
		t.Errorf("the acquire's PUT: %v, want its reply dropped", err)
	}
	if got, err := etcd.SetOf(cl).Admin().Get(ctx, key); err != nil || len(got.Kvs) != 1 {
		t.Errorf("after the dropped PUT the key reads %v (%v), want it written: it ran on the cluster", got, err)
	}

	rctx, leave := c.Enter(ctx, failpoint.PhaseRelease)
	_, err = etcd.Of(c).Delete(rctx, key)
	leave()
	if !errors.Is(err, harness.ErrNotSent) {
		t.Errorf("the release's DELETE: %v, want not sent (the client crashed before it)", err)
	}
	if got, err := etcd.SetOf(cl).Admin().Get(ctx, key); err != nil || len(got.Kvs) != 1 {
		t.Errorf("after the crash before the DELETE the key reads %v (%v), want it still there", got, err)
	}
	if lines := points.Unfired(); len(lines) > 0 {
		t.Errorf("failpoints did not fire: %v", lines)
	}
}
