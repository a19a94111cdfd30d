package memcached_test

import (
	"context"
	"errors"
	"fmt"
	redisservice "github.com/locklab/locklab/service/redis"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/service/memcached"
)

// start starts the memcached topology on local processes, or skips.
func start(t *testing.T) *cluster.Cluster {
	t.Helper()
	if _, err := exec.LookPath("memcached"); err != nil {
		t.Skip("memcached is not installed (make deps installs it)")
	}
	cl, err := cluster.Start(context.Background(), cluster.Config{Topology: cluster.MemcachedTopology, Backend: local.Local{}, Service: memcached.Service{}})
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

// join connects client id through its own link.
func join(t *testing.T, cl *cluster.Cluster, id int) *harness.Client {
	t.Helper()
	c, err := harness.Connect(context.Background(), cl, harness.ClientOptions{ID: id, TTL: 2 * time.Second, Service: memcached.Service{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestService: a client reaches the server through its own handle, the
// correct lock excludes a second client and releases, and the lock's
// state reads as a cluster.State; a restart loses the lock.
func TestService(t *testing.T) {
	ctx := context.Background()
	cl := start(t)
	a, b := join(t, cl, 0), join(t, cl, 1)
	if memcached.Of(a) == nil || redisservice.Of(a) != nil {
		t.Fatalf("handle %v, Redis %v: want only memcached", memcached.Of(a), redisservice.Of(a))
	}
	if env := a.Endpoints().Env; len(env) != 1 || env[0] == "LOCKLAB_MEMCACHED="+cl.LockNodes()[0].Addr() {
		t.Errorf("env %q: want LOCKLAB_MEMCACHED through the client's link, not the server's own address", env)
	}
	la, err := memcached.NewLock(a).Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := memcached.NewLock(b).Acquire(ctx, "k"); !errors.Is(err, harness.ErrNotAcquired) {
		t.Fatalf("second acquire: %v, want ErrNotAcquired", err)
	}
	if left, err := cl.LockState(ctx, "k"); err != nil || !left.Expires || left.Left < memcached.MinLease || left.Left > memcached.Lease(2*time.Second) {
		t.Fatalf("lock state %v, %v: want 2-3 s: a lease of 2 s asks for 3", left, err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if left, err := cl.LockState(ctx, "k"); err != nil || left.Held {
		t.Fatalf("lock state after release %v, %v: want -2", left, err)
	}
	if _, err := memcached.NewLock(b).Acquire(ctx, "k"); err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if err := cl.LockNodes()[0].Restart(ctx, true); err != nil {
		t.Fatal(err)
	}
	if left, err := cl.LockState(ctx, "k"); err != nil || left.Held {
		t.Fatalf("lock state after restart %v, %v: want -2: memcached keeps nothing", left, err)
	}
}

// TestReleaseOfAnother: a release whose item expired and was taken by
// another client says ErrNotHeld and removes nothing.
func TestReleaseOfAnother(t *testing.T) {
	ctx := context.Background()
	cl := start(t)
	a, b := join(t, cl, 0), join(t, cl, 1)
	la, err := memcached.Lock{Seconds: 1, NoRenewal: true}.For(a).Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	// The item expires at the server's next tick, within a second.
	deadline := time.Now().Add(3 * time.Second)
	var lb harness.Lease
	for lb == nil && time.Now().Before(deadline) {
		if lb, err = memcached.NewLock(b).Acquire(ctx, "k"); err != nil && !errors.Is(err, harness.ErrNotAcquired) {
			t.Fatal(err)
		}
	}
	if lb == nil {
		t.Fatal("the one-second item did not expire within 3 s")
	}
	if err := la.Release(ctx); !errors.Is(err, harness.ErrNotHeld) {
		t.Errorf("release of an expired hold: %v, want ErrNotHeld", err)
	}
	if left, _ := cl.LockState(ctx, "k"); !left.Held {
		t.Error("the release of an expired hold removed the other's item")
	}
	if err := lb.Release(ctx); err != nil {
		t.Errorf("the other's release: %v", err)
	}
}

// TestEvict: a writer that fills the server's memory makes it evict the
// lock's item while it is held, and a second client takes the lock.
func TestEvict(t *testing.T) {
	ctx := context.Background()
	cl := start(t)
	a, b := join(t, cl, 0), join(t, cl, 1)
	if _, err := memcached.NewLock(a).Acquire(ctx, "lock"); err != nil {
		t.Fatal(err)
	}
	evicter, ok := cl.Deployment().(cluster.Evicter)
	if !ok {
		t.Fatal("the memcached deployment is no cluster.Evicter")
	}
	written, err := evicter.Evict(ctx, "lock")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("evicted after %d writes", written)
	if _, err := memcached.NewLock(b).Acquire(ctx, "lock"); err != nil {
		t.Fatalf("acquire after the eviction: %v", err)
	}
	if _, err := evicter.Evict(ctx, "none"); err == nil {
		t.Error("an eviction of no item succeeded")
	}
}

// TestEvictLongToken: an item whose value and key are of any size is
// evicted, since the writer's items are of its size class.
func TestEvictLongToken(t *testing.T) {
	ctx := context.Background()
	cl := start(t)
	evicter := cl.Deployment().(cluster.Evicter)
	for _, tc := range []struct{ key, value string }{
		{"lock", "0123456789abcdef0123456789abcdef"},
		{"k", "t"},
		{"locklab:prefixed:lock", strings.Repeat("v", 90)},
	} {
		if _, err := memcached.Ask(ctx, cl.LockNodes()[0].Addr(), fmt.Sprintf("ms %s %d T5\r\n%s", tc.key, len(tc.value), tc.value)); err != nil {
			t.Fatal(err)
		}
		written, err := evicter.Evict(ctx, tc.key)
		if err != nil {
			t.Errorf("key %q, value of %d: %v", tc.key, len(tc.value), err)
		}
		t.Logf("key %q, value of %d: evicted after %d writes", tc.key, len(tc.value), written)
	}
}
