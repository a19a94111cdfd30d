package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/service/memcached"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// TestDockerMemcached starts the memcached service on the docker backend
// through the seam (cluster.ServerStarter): a client locks through its own
// link, a kill and restart leave the server empty at the same address, a
// paused server answers nothing until resumed, and Close leaves nothing.
func TestDockerMemcached(t *testing.T) {
	d := testDocker(t)
	start := time.Now()
	cl, err := cluster.Start(within(t, time.Minute), cluster.Config{Topology: cluster.MemcachedTopology, Backend: d, Service: memcached.Service{}})
	if errors.Is(err, memcached.ErrNoMemcached) {
		t.Skipf("memcached not tested on docker: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("memcached topology started in %v", time.Since(start).Round(time.Millisecond))
	id := runOf(cl).id
	t.Cleanup(func() {
		// Close stops the server twice: through the deployment, then as a
		// lock node.
		if err := cl.Close(); err != nil {
			t.Error(err)
		}
		if left := labelled(t, dockerRunLabel+"="+id); len(left) > 0 {
			t.Errorf("run %s left %v", id, left)
		}
	})
	ctx := within(t, time.Minute)
	n := cl.LockNodes()[0]
	addr := n.Addr()
	if _, redis := n.(sentinel.Node); !strings.HasPrefix(addr, "127.0.0.1:") || redis {
		t.Errorf("node %s at %s, a Redis node %v: want 127.0.0.1 only and no Redis node", n.Name(), addr, redis)
	}
	// The lag meter counts the container's threads from its pid.
	pid := n.(cluster.ServerProcess).Pid()
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || string(comm) != "locklab-init\n" {
		t.Errorf("server pid %d runs %q (%v), want locklab-init", pid, comm, err)
	}

	a := connect(t, cl, 0)
	if _, err := memcached.NewLock(a).Acquire(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	// A lease of 2 s asks the server for 3 (memcached.Lease).
	if left, err := cl.LockState(ctx, "k"); err != nil || !left.Expires || left.Left < memcached.MinLease || left.Left > memcached.Lease(memcached.MinLease) {
		t.Fatalf("lock state %v, %v: want 2-3 s", left, err)
	}

	start = time.Now()
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if n.Running() {
		t.Error("killed node still running")
	}
	if err := n.Restart(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("kill and restart: %v", time.Since(start).Round(time.Millisecond))
	if !n.Running() || n.Addr() != addr {
		t.Errorf("restarted node running %v at %s, want running at %s", n.Running(), n.Addr(), addr)
	}
	if left, err := cl.LockState(ctx, "k"); err != nil || left.Held {
		t.Fatalf("lock state after restart %v, %v: want -2: memcached keeps nothing", left, err)
	}
	// A client's link reaches the restarted server at the same address.
	if _, err := memcached.NewLock(connect(t, cl, 1)).Acquire(ctx, "k"); err != nil {
		t.Fatalf("acquire after restart: %v", err)
	}

	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = cl.LockState(pctx, "k")
	cancel()
	if err == nil {
		t.Error("a paused server answered")
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if left, err := cl.LockState(ctx, "k"); err != nil || left.Left < time.Second {
		t.Errorf("lock state after resume %v, %v: want the second client's lock", left, err)
	}
	// A restart without data, and of a running server, is as empty.
	if err := n.Restart(ctx, false); err != nil {
		t.Fatal(err)
	}
	if left, err := cl.LockState(ctx, "k"); err != nil || left.Held {
		t.Errorf("lock state after a restart without data %v, %v: want -2", left, err)
	}
}

// TestDockerServerMissingImage: a server whose image docker/build.sh did
// not build says so in one line that wraps its spec's Missing and names
// the fix.
func TestDockerServerMissingImage(t *testing.T) {
	d := testDocker(t)
	run, err := d.StartRun(within(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := run.Close(); err != nil {
			t.Error(err)
		}
	})
	missing := errors.New("no such server")
	_, err = cluster.StartServer(within(t, time.Minute), run, cluster.ServerSpec{
		Name: "x1", Program: "/usr/bin/locklab-no-such-server", Missing: missing,
		Args:  func(string, int) []string { return nil },
		Ready: func(context.Context, string) error { return nil },
	})
	if !errors.Is(err, missing) || !errors.Is(err, ErrNoDocker) || !strings.Contains(err.Error(), "make docker") || strings.Contains(err.Error(), "\n") {
		t.Errorf("StartServer = %v, want one line wrapping the spec's Missing and naming make docker", err)
	}
}

// connect connects client id to cl's memcached through its own link.
func connect(t *testing.T, cl *cluster.Cluster, id int) *harness.Client {
	t.Helper()
	c, err := harness.Connect(within(t, 10*time.Second), cl, harness.ClientOptions{ID: id, Service: memcached.Service{}, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestDockerMemcachedClockJump runs clock-jump-memcached on docker: the
// memcached image has no libfaketime, so the server's clock cannot jump,
// and the run is spoiled with that reason, every verdict unknown: never
// an ok for a jump that was not made.
func TestDockerMemcachedClockJump(t *testing.T) {
	backend := testDocker(t)
	s, err := scenarios.Lookup("clock-jump-memcached")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	res, err := runner.Run(ctx, s, memcached.NewLock, runner.Options{Lock: "memcached", Backend: backend, Dir: t.TempDir(), ReferenceRuns: -1})
	if errors.Is(err, memcached.ErrNoMemcached) {
		t.Skipf("memcached not tested on docker: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Spoiled, func(s string) bool { return strings.Contains(s, "was not made") }) {
		t.Errorf("spoiled %q: want the jump not made, for its reason", res.Spoiled)
	}
	for _, ch := range res.Checks {
		if ch.Verdict != checker.Unknown {
			t.Errorf("%s: %s (%s), want unknown", ch.Checker, ch.Verdict, ch.Detail)
		}
	}
	t.Logf("spoiled: %q", res.Spoiled)
}
