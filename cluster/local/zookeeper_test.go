package local

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/service/zookeeper"
)

// TestZooKeeperTopology starts the zookeeper topology, writes through the
// ensemble, kills its leader and restarts it with its data: the write
// survives, a new leader is elected, and the restarted server rejoins.
// Nothing is left after Close.
func TestZooKeeperTopology(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.ZooKeeperTopology, Backend: Local{}, Service: zookeeper.Service{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("zookeeper topology (3 servers and the inventory) started in %s", time.Since(start).Round(time.Millisecond))
	defer func() {
		if err := cl.Close(); err != nil {
			t.Error(err)
		}
	}()
	admin := zookeeper.SetOf(cl).Admin()
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
	if st, err := cl.LockState(ctx, "lock"); err != nil || st.Held {
		t.Fatalf("LockState with no lock = %v, %v; want free", st, err)
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

// TestZooKeeperClockJump jumps every server's wall clock 30 s forward, 30
// session timeouts: the jump is real (a znode written after it carries an
// mtime 30 s ahead, stamped by the leader), yet a session of 1 s keeps its
// ephemeral node and never expires, since ZooKeeper times sessions with the
// monotonic clock. Without libfaketime it is skipped with one line.
func TestZooKeeperClockJump(t *testing.T) {
	ctx := t.Context()
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.ZooKeeperTopology, Backend: Local{}, Service: zookeeper.Service{}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cl.Close(); err != nil {
			t.Error(err)
		}
	}()
	set := zookeeper.SetOf(cl)
	conn, events, err := zk.Connect(set.Endpoints(), time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Create("/held", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	const jump = 30 * time.Second
	for _, n := range set.Nodes() {
		if err := n.(cluster.ClockJumper).JumpClock(jump); err != nil {
			t.Skipf("the clock jump is not tested: %v", err)
		}
	}
	before := time.Now()
	st, err := set.Admin().Create("/stamp", nil, 0, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	_, stat, err := set.Admin().Get(st)
	if err != nil {
		t.Fatal(err)
	}
	ahead := time.UnixMilli(stat.Mtime).Sub(before)
	if ahead < jump-2*time.Second {
		t.Fatalf("a znode written after the jump is stamped %s ahead of the real clock, want about %s: the jump was not made", ahead, jump)
	}
	t.Logf("a znode written after the jump is stamped %s ahead of the real clock", ahead.Round(time.Millisecond))
	// Three session timeouts: a session timed by the wall clock would have
	// expired at the first tick after the jump.
	watch := time.After(3 * time.Second)
	for waiting := true; waiting; {
		select {
		case ev := <-events:
			if ev.State == zk.StateExpired {
				t.Fatalf("the session expired after the wall-clock jump: %+v", ev)
			}
		case <-watch:
			waiting = false
		}
	}
	if ok, _, err := set.Admin().Exists("/held"); err != nil || !ok {
		t.Fatalf("the ephemeral node of a live session is gone after the jump (%v, %v)", ok, err)
	}
	if conn.State() != zk.StateHasSession {
		t.Errorf("session state %s after the jump, want %s", conn.State(), zk.StateHasSession)
	}
}
