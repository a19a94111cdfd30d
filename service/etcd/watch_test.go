package etcd_test

import (
	"context"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/service/etcd"
)

// TestWatchLock: the watcher records each put and delete under the lock's
// prefix, with its revision and lease; a key gone with its lease when it
// ran out is marked Gone, one a client deleted is not. Keys of other
// locks are not recorded, and stop returns with every change recorded.
func TestWatchLock(t *testing.T) {
	ctx := context.Background()
	cl := start(t)
	h, err := history.New("")
	if err != nil {
		t.Fatal(err)
	}
	stop := service.WatchLock(ctx, cl.Deployment(), h, "lock")
	admin := etcd.SetOf(cl).Admin()
	lease, err := admin.Grant(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Put(ctx, etcd.KeyPrefix+"lock/held", "", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"lock/freed", "other/key"} {
		if _, err := admin.Put(ctx, etcd.KeyPrefix+k, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Delete(ctx, etcd.KeyPrefix+"lock/freed"); err != nil {
		t.Fatal(err)
	}
	// The lease runs out on the server, which deletes its key.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = cluster.PollUntil(wctx, "the lease's key to go", func(ctx context.Context) (string, error) {
		got, err := admin.Get(ctx, etcd.KeyPrefix+"lock/held")
		if err != nil || got.Count == 0 {
			return "", err
		}
		return "the key lives", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A change outside the prefix moves the revision the drain waits
	// for: a progress notification, not an event, tells the watch reached it.
	if _, err := admin.Put(ctx, etcd.KeyPrefix+"other/key", "again"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	stop()
	took := time.Since(began)
	t.Logf("stop took %s", took)
	if took > 2*time.Second {
		t.Errorf("stop took %s", took)
	}
	type seen struct {
		key, event string
		leased     bool
		gone       bool
	}
	var got []seen
	for _, op := range h.Ops() {
		if op.Kind != history.KindServer || op.Server == nil {
			t.Fatalf("a recorded op is not a server event: %+v", op)
		}
		if op.Server.Revision == 0 || op.Call > op.Return {
			t.Errorf("%s %s: revision %d, seen %s–%s", op.Server.Event, op.Key, op.Server.Revision, op.Call, op.Return)
		}
		got = append(got, seen{op.Key, op.Server.Event, op.Server.Session != "", op.Server.Gone})
	}
	p := etcd.KeyPrefix + "lock/"
	want := []seen{{p + "held", "put", true, false}, {p + "freed", "put", false, false}, {p + "freed", "delete", false, false}, {p + "held", "delete", true, true}}
	if !slices.Equal(got, want) {
		t.Errorf("server events %+v, want %+v", got, want)
	}
}
