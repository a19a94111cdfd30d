package sentinel_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/service/redis/sentinel"
	"github.com/redis/go-redis/v9"
)

// failoverBudget is how long a failover may take, from the master's death to
// a majority of Sentinels naming a new one: down-after (1.5 s) plus a few
// Sentinel periods and one replica INFO (1 s), with room for a loaded machine.
const failoverBudget = 5 * time.Second

// startTestReplicated starts the replicated topology on a network of its own;
// both are closed when the test ends.
func startTestReplicated(tb testing.TB) *sentinel.ReplicaSet {
	tb.Helper()
	network := startTestNetwork(tb)
	r, err := sentinel.StartReplicaSet(within(tb, 20*time.Second), localRunOf(tb), tb.TempDir(), network)
	if err != nil {
		tb.Fatal(err)
	}
	// Registered after the network's, so it runs first.
	tb.Cleanup(func() {
		if err := r.Close(); err != nil {
			tb.Error(err)
		}
	})
	return r
}

// localRunOf returns a run of the local backend, which starts processes.
func localRunOf(tb testing.TB) cluster.RunSession {
	tb.Helper()
	run, err := local.Local{}.StartRun(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	return run
}

// awaitValue polls n until key holds want ("" for absent), within 3 s.
func awaitValue(t *testing.T, n cluster.Node, key, want string) {
	t.Helper()
	admin := n.(sentinel.Node).Admin()
	err := cluster.PollUntil(within(t, 3*time.Second), "await "+key+" on "+n.Name(), func(ctx context.Context) (string, error) {
		got, err := admin.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			got, err = "", nil
		}
		if err != nil || got != want {
			return "GET " + key + " = " + got, nil
		}
		return "", nil
	})
	if err != nil {
		t.Fatalf("%v; want %q", err, want)
	}
}

// awaitReplicaOf polls until n is a replica of master with its link up, within 10 s.
func awaitReplicaOf(t *testing.T, n, master cluster.Node) {
	t.Helper()
	ctx := within(t, 10*time.Second)
	err := cluster.PollUntil(ctx, n.Name()+" becomes a replica of "+master.Name(), func(ctx context.Context) (string, error) {
		from, err := sentinel.ReplicaMasterAddr(ctx, n.(sentinel.Node))
		if err != nil {
			return err.Error(), nil
		}
		if from != master.Addr() {
			return "replicates from " + from, nil
		}
		status, err := sentinel.InfoField(ctx, n.(sentinel.Node), "replication", "master_link_status")
		if err != nil || status != "up" {
			return "master_link_status " + status, nil
		}
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// awaitAllSentinelsName polls until every Sentinel names master, within 3 s.
func awaitAllSentinelsName(t *testing.T, r *sentinel.ReplicaSet, master cluster.Node) {
	t.Helper()
	err := cluster.PollUntil(within(t, 3*time.Second), "every Sentinel names "+master.Name(), func(ctx context.Context) (string, error) {
		for _, s := range r.Sentinels() {
			hostPort, err := s.Admin().Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", sentinel.MasterName).StringSlice()
			if err != nil || len(hostPort) != 2 || net.JoinHostPort(hostPort[0], hostPort[1]) != master.Addr() {
				return fmt.Sprintf("%s names %v (%v)", s.Name(), hostPort, err), nil
			}
		}
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// set writes key=value on n.
func set(t *testing.T, n cluster.Node, key, value string) {
	t.Helper()
	if err := n.(sentinel.Node).Admin().Set(within(t, 2*time.Second), key, value, 0).Err(); err != nil {
		t.Fatalf("SET %s on %s: %v", key, n.Name(), err)
	}
}

// waitReplicas runs WAIT on n: how many replicas acknowledged its writes within timeout.
func waitReplicas(t *testing.T, n cluster.Node, replicas int, timeout time.Duration) int64 {
	t.Helper()
	acked, err := n.(sentinel.Node).Admin().Wait(within(t, timeout+2*time.Second), replicas, timeout).Result()
	if err != nil {
		t.Fatalf("WAIT on %s: %v", n.Name(), err)
	}
	return acked
}

func TestReplicatedReplicates(t *testing.T) {
	t.Parallel()
	r := startTestReplicated(t)
	nodes := r.Nodes()
	if len(nodes) != 3 || len(r.Sentinels()) != 3 || len(r.SentinelAddrs()) != 3 {
		t.Fatalf("%d nodes, %d sentinels, %d sentinel addresses; want 3 of each",
			len(nodes), len(r.Sentinels()), len(r.SentinelAddrs()))
	}
	master, err := r.Master(within(t, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if master != nodes[0] {
		t.Fatalf("Master() = %s, want %s", master.Name(), nodes[0].Name())
	}
	set(t, master, "k", "v")
	for _, replica := range nodes[1:] {
		awaitValue(t, replica, "k", "v")
	}
}

func TestReplicatedCutReplication(t *testing.T) {
	t.Parallel()
	r := startTestReplicated(t)
	nodes := r.Nodes()
	master, cut, other := nodes[0], nodes[1], nodes[2]

	heal, err := r.CutReplication(within(t, 2*time.Second), cut)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { heal() })
	set(t, master, "k", "v")
	// WAIT returns once the other replica acknowledges the write, and counts
	// every replica that has by then: the cut one must not be among them.
	if acked := waitReplicas(t, master, 1, 5*time.Second); acked != 1 {
		t.Errorf("WAIT 1 = %d, want 1", acked)
	}
	awaitValue(t, other, "k", "v")
	if err := cut.Admin().Get(within(t, time.Second), "k").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("GET k on the cut replica: %v, want nil", err)
	}
	if status, err := sentinel.InfoField(within(t, time.Second), cut, "replication", "master_link_status"); err != nil || status != "down" {
		t.Errorf("cut replica's master_link_status = %q, %v; want down", status, err)
	}

	if err := heal(); err != nil {
		t.Fatal(err)
	}
	awaitValue(t, cut, "k", "v")
	awaitReplicaOf(t, cut, master) // directly again, not through the link
	if err := heal(); err != nil {
		t.Errorf("second heal: %v", err)
	}
	if _, err := r.CutReplication(within(t, time.Second), master); err == nil {
		t.Error("CutReplication of the master succeeded")
	}
}

func TestReplicatedOverlappingCuts(t *testing.T) {
	t.Parallel()
	r := startTestReplicated(t)
	nodes := r.Nodes()
	master, cut := nodes[0], nodes[1]

	var heals []network.Heal
	for range 2 {
		heal, err := r.CutReplication(within(t, 2*time.Second), cut)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { heal() })
		heals = append(heals, heal)
	}
	if err := heals[0](); err != nil {
		t.Fatal(err)
	}
	// The second cut still holds.
	set(t, master, "k", "v")
	if acked := waitReplicas(t, master, 1, 5*time.Second); acked != 1 {
		t.Errorf("WAIT 1 = %d, want 1", acked)
	}
	if err := cut.Admin().Get(within(t, time.Second), "k").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("GET k with one of two cuts healed: %v, want nil", err)
	}
	if err := heals[1](); err != nil {
		t.Fatal(err)
	}
	awaitValue(t, cut, "k", "v")
}

func TestReplicatedDelayReplication(t *testing.T) {
	t.Parallel()
	r := startTestReplicated(t)
	nodes := r.Nodes()
	master, slow, other := nodes[0], nodes[1], nodes[2]
	const delay = 400 * time.Millisecond

	heal, err := r.DelayReplication(within(t, 5*time.Second), slow, delay)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { heal() })
	start := time.Now()
	set(t, master, "k", "v")
	awaitValue(t, other, "k", "v")
	awaitValue(t, slow, "k", "v")
	if took := time.Since(start); took < delay {
		t.Errorf("the write reached the delayed replica after %v, want at least %v", took, delay)
	}

	if err := heal(); err != nil {
		t.Fatal(err)
	}
	awaitReplicaOf(t, slow, master)
	start = time.Now()
	set(t, master, "k2", "v")
	awaitValue(t, slow, "k2", "v")
	if took := time.Since(start); took >= delay {
		t.Errorf("after the heal a write took %v to replicate, want less than %v", took, delay)
	}
}

func TestFailoverKillAndRestart(t *testing.T) {
	t.Parallel()
	r := startTestReplicated(t)
	old := r.Nodes()[0]
	set(t, old, "before", "1")
	if acked := waitReplicas(t, old, 2, 5*time.Second); acked != 2 {
		t.Fatalf("WAIT 2 = %d, want 2", acked)
	}

	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	to, took, err := r.AwaitFailover(within(t, 15*time.Second), old)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failover from %s to %s took %v", old.Name(), to.Name(), took)
	if to == old || !slices.Contains(r.Nodes()[1:], to) {
		t.Fatalf("AwaitFailover = %s, want a replica", to.Name())
	}
	if took > failoverBudget {
		t.Errorf("failover took %v, want at most %v", took, failoverBudget)
	}

	// A client of the topology finds the new master through the Sentinels.
	var mu sync.Mutex
	var dialled []string
	var d net.Dialer
	fc := r.FailoverClient(&redis.Options{
		Protocol: 2, DisableIdentity: true, MaxRetries: -1, DialerRetries: 1,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
	}, func(ctx context.Context, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		return d.DialContext(ctx, "tcp", addr)
	})
	defer fc.Close()
	// AwaitFailover needs a majority; a client may ask the third Sentinel,
	// so let it hear of the failover too (a hello period).
	awaitAllSentinelsName(t, r, to)
	if err := fc.Set(within(t, 2*time.Second), "after", "1", 0).Err(); err != nil {
		t.Fatalf("SET through the failover client: %v", err)
	}
	awaitValue(t, to, "after", "1")
	mu.Lock()
	if !slices.Equal(dialled, []string{to.Addr()}) {
		t.Errorf("dial was called for %v, want just the new master %s", dialled, to.Addr())
	}
	mu.Unlock()

	// Restarted empty, the old master comes back as a master of nothing;
	// Sentinel turns it into a replica of the new master, which resyncs it.
	if err := old.Restart(within(t, 5*time.Second), false); err != nil {
		t.Fatal(err)
	}
	awaitReplicaOf(t, old, to)
	awaitValue(t, old, "after", "1")
	if m, err := r.Master(within(t, 2*time.Second)); err != nil || m != to {
		t.Errorf("Master() after the restart = %v, %v; want %s", m, err, to.Name())
	}
}

func TestFailoverOnPause(t *testing.T) {
	t.Parallel()
	r := startTestReplicated(t)
	old := r.Nodes()[0]
	if err := old.Pause(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			old.Resume()
		}
	})
	to, took, err := r.AwaitFailover(within(t, 15*time.Second), old)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failover from paused %s to %s took %v", old.Name(), to.Name(), took)
	if err := old.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	// It wakes up believing it is the master; Sentinel demotes it.
	awaitReplicaOf(t, old, to)
}

// TestFailoverLosesUnreplicatedWrite is pitfall 10 at the level of the
// topology: a write the master acknowledged but never replicated is gone
// once Sentinel promotes a replica.
func TestFailoverLosesUnreplicatedWrite(t *testing.T) {
	t.Parallel()
	r := startTestReplicated(t)
	nodes := r.Nodes()
	master := nodes[0]
	set(t, master, "replicated", "1")
	if acked := waitReplicas(t, master, 2, 5*time.Second); acked != 2 {
		t.Fatalf("WAIT 2 = %d, want 2", acked)
	}

	var heals []network.Heal
	for _, replica := range nodes[1:] {
		heal, err := r.CutReplication(within(t, 2*time.Second), replica)
		if err != nil {
			t.Fatal(err)
		}
		heals = append(heals, heal)
	}
	set(t, master, "lock", "client-1") // acknowledged to the client...
	if acked := waitReplicas(t, master, 1, 100*time.Millisecond); acked != 0 {
		t.Fatalf("WAIT 1 100 = %d, want 0", acked) // ...but on the master alone
	}
	if err := master.Kill(); err != nil {
		t.Fatal(err)
	}
	to, took, err := r.AwaitFailover(within(t, 15*time.Second), master)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failover to %s took %v", to.Name(), took)

	ctx := within(t, 2*time.Second)
	if err := to.Admin().Get(ctx, "lock").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("GET lock on the new master: %v, want nil: the write was never replicated", err)
	}
	if v, err := to.Admin().Get(ctx, "replicated").Result(); err != nil || v != "1" {
		t.Errorf("GET replicated on the new master = %q, %v; want 1", v, err)
	}
	// The failover already moved both replicas off their detours.
	for _, heal := range heals {
		if err := heal(); err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkFailover measures a failover: from the master's SIGKILL until a
// majority of Sentinels name a new master (ns/op). Start-up and tear-down are
// not counted.
func BenchmarkFailover(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		network, err := network.Start(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		r, err := sentinel.StartReplicaSet(b.Context(), localRunOf(b), b.TempDir(), network)
		if err != nil {
			b.Fatal(err)
		}
		master := r.Nodes()[0]
		b.StartTimer()
		if err := master.Kill(); err != nil {
			b.Fatal(err)
		}
		_, _, err = r.AwaitFailover(b.Context(), master)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if err := errors.Join(r.Close(), network.Close()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// within returns a context that ends after d, for commands expected to answer.
func within(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(tb.Context(), d)
	tb.Cleanup(cancel)
	return ctx
}

// startTestNetwork starts a network the test closes when it ends.
func startTestNetwork(tb testing.TB) *network.Proxy {
	tb.Helper()
	n, err := network.Start(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := n.Close(); err != nil {
			tb.Error(err)
		}
	})
	return n
}
