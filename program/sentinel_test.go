package program

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/program/relay"
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// redisPy is programs/redispy.py, run by Debian's python3, or a skip when
// it lacks redis-py.
func redisPy(t *testing.T) string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import redis.sentinel").Run(); err != nil {
		t.Skip("python3 with redis-py is not installed (make deps installs python3-redis)")
	}
	p, err := filepath.Abs(filepath.Join("..", "programs", "redispy.py"))
	if err != nil {
		t.Fatal(err)
	}
	return "/usr/bin/python3 " + p
}

// askMaster is the master's address that the Sentinel at addr names.
func askMaster(ctx context.Context, addr string) (string, error) {
	s := redis.NewSentinelClient(&redis.Options{Addr: addr})
	defer s.Close()
	hp, err := s.GetMasterAddrByName(ctx, sentinel.MasterName).Result()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// TestSentinelRelay: on replicated, a program gets relayed Sentinels in
// LOCKLAB_SENTINELS, which name its relay's listeners, one per data node,
// in place of the nodes: GET-MASTER-ADDR-BY-NAME, MASTERS' and REPLICAS'
// ip and port; the Sentinels' own addresses pass unchanged. After a
// failover the master they name, and the +switch-master message, is the
// relay's listener for the new one.
func TestSentinelRelay(t *testing.T) {
	ctx := context.Background()
	_, c, links := joinTopology(t, cluster.Replicated, 0, 500*time.Millisecond)
	e := c.Endpoints()
	if why := e.Unrelayed(); why != "" {
		t.Fatalf("Unrelayed: %q, want replicated relayed", why)
	}
	upstream, proto, err := relayed(e)
	if err != nil || proto != relay.RedisReplicas || len(upstream) != len(links) {
		t.Fatalf("relayed: %q %v %v, want each data node's link", upstream, proto, err)
	}
	r, err := relay.Listen(c, upstream, proto)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	doors, stop, err := e.SentinelRelay.RelaySentinels(r.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer stop.Close()
	env := envOf(environment(c, r, doors))
	if got := strings.Split(env[EnvSentinels], ","); !slices.Equal(got, doors) || env[EnvMaster] != sentinel.MasterName || env[EnvRedis] != "" {
		t.Fatalf("environment %v, want the relayed Sentinels %q", env, doors)
	}
	// relayOf is the relay's listener for the data node at addr.
	relayOf := func(addr string) string {
		for i, l := range links {
			if l.Upstream() == addr {
				return r.Addrs()[i]
			}
		}
		t.Fatalf("%s is no data node", addr)
		return ""
	}
	master, err := askMaster(ctx, e.Sentinels[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, door := range doors {
		if got, err := askMaster(ctx, door); err != nil || got != relayOf(master) {
			t.Errorf("the relayed Sentinel %s names the master %s %v, want the relay's %s", door, got, err, relayOf(master))
		}
	}

	s := redis.NewSentinelClient(&redis.Options{Addr: doors[0]})
	defer s.Close()
	masters, err := s.Masters(ctx).Result()
	if err != nil || len(masters) != 1 {
		t.Fatalf("MASTERS: %v %v", masters, err)
	}
	if m := fields(masters[0]); net.JoinHostPort(m["ip"], m["port"]) != relayOf(master) {
		t.Errorf("MASTERS names %s:%s, want the relay's %s", m["ip"], m["port"], relayOf(master))
	}
	replicas, err := s.Replicas(ctx, sentinel.MasterName).Result()
	if err != nil || len(replicas) != len(links)-1 {
		t.Fatalf("REPLICAS: %v %v", replicas, err)
	}
	for _, rep := range replicas {
		addr := net.JoinHostPort(rep["ip"], rep["port"])
		if !slices.Contains(r.Addrs(), addr) || addr == relayOf(master) {
			t.Errorf("REPLICAS names %s, want a relay's listener for a replica", addr)
		}
		if rep["name"] != addr {
			t.Errorf("a replica's name %q, want %s", rep["name"], addr)
		}
	}
	peers, err := s.Sentinels(ctx, sentinel.MasterName).Result()
	if err != nil || len(peers) != len(e.Sentinels)-1 {
		t.Fatalf("SENTINELS: %v %v", peers, err)
	}
	for _, p := range peers {
		if addr := net.JoinHostPort(p["ip"], p["port"]); !slices.Contains(e.Sentinels, addr) {
			t.Errorf("SENTINELS names %s, want a Sentinel's own address", addr)
		}
	}

	// A failover: the relayed Sentinels name the relay's listener for the
	// new master, in their replies and in the +switch-master message of a
	// subscriber.
	sub := s.Subscribe(ctx, "+switch-master")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatalf("subscribe to +switch-master: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	admin := redis.NewSentinelClient(&redis.Options{Addr: e.Sentinels[0]})
	defer admin.Close()
	// A Sentinel refuses (NOGOODSLAVE) until it has read the replicas'
	// INFO afresh.
	err = cluster.PollEvery(wctx, 50*time.Millisecond, "a failover", func(ctx context.Context) (string, error) {
		if err := admin.Failover(ctx, sentinel.MasterName).Err(); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var now string
	err = cluster.PollEvery(wctx, 50*time.Millisecond, "a new master", func(ctx context.Context) (string, error) {
		if now, _ = askMaster(ctx, e.Sentinels[0]); now == "" || now == master {
			return "the Sentinels to name another master than " + master, nil
		}
		return "", nil
	})
	if err != nil {
		t.Fatalf("no failover from %s: %v", master, err)
	}
	select {
	case msg := <-sub.Channel():
		w := strings.Fields(msg.Payload)
		if len(w) != 5 || net.JoinHostPort(w[1], w[2]) != relayOf(master) || net.JoinHostPort(w[3], w[4]) != relayOf(now) {
			t.Errorf("+switch-master %q, want the relay's %s then %s", msg.Payload, relayOf(master), relayOf(now))
		}
	case <-wctx.Done():
		t.Error("no +switch-master message")
	}
	// Each Sentinel learns of the failover in its own time.
	err = cluster.PollEvery(wctx, 50*time.Millisecond, "the relayed Sentinels to follow the failover", func(ctx context.Context) (string, error) {
		for _, door := range doors {
			if got, _ := askMaster(ctx, door); got != relayOf(now) {
				return fmt.Sprintf("%s names %s, not the relay's %s for %s", door, got, relayOf(now), now), nil
			}
		}
		return "", nil
	})
	if err != nil {
		t.Error(err)
	}
}

// fields is a MASTERS entry as go-redis returns it, a flat list of field
// and value, as a map.
func fields(entry any) map[string]string {
	m := map[string]string{}
	switch e := entry.(type) {
	case map[any]any:
		for k, v := range e {
			m[k.(string)], _ = v.(string)
		}
	case []any:
		for i := 0; i+1 < len(e); i += 2 {
			k, _ := e[i].(string)
			m[k], _ = e[i+1].(string)
		}
	}
	return m
}

// TestSentinelProgram: programs/redispy.py with redis-py's Sentinel client
// on replicated, through its relayed Sentinels and its relay: it takes a
// key another client then is refused and releases it, its footprint
// learned from its SET; a crash before its acquire's SET and a lost reply
// after it strike that SET; a cut of its link to the master reaches it,
// and the heal lets it take the lock again.
func TestSentinelProgram(t *testing.T) {
	tests := []struct {
		name    string
		action  failpoint.Action
		point   string
		ran     bool // whether the struck SET reached the master
		crashed bool // whether the program is gone after it
	}{
		{"crash before the SET", failpoint.Crash(), failpoint.BeforeCommand(failpoint.PhaseAcquire, 1), false, true},
		{"lost reply after the SET", failpoint.DropReply(), failpoint.AfterCommand(failpoint.PhaseAcquire, 1), true, false},
	}
	cmd := redisPy(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			cl := startTopology(t, cluster.Replicated)
			// Client 0's second acquire is the one struck.
			points := failpoint.NewSet([]failpoint.Point{{Name: tt.point, Client: 0, Skip: 1, Action: tt.action}})
			h, _ := history.New("")
			a := joinService(t, cl, 0, time.Second, points, h)
			b, links, err := harness.Join(ctx, cl, harness.ClientOptions{ID: 1, TTL: time.Second, Timeout: 500 * time.Millisecond, Service: service.For(cl.Topology())}, h, points)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(b.Close)
			la, lb := New(cmd)(a).(*Lock), New(cmd)(b).(*Lock)
			for _, l := range []*Lock{la, lb} {
				if l.p == nil || l.p.relay == nil || l.p.sentinels == nil {
					t.Fatalf("the program did not start with a relay and relayed Sentinels: %v", l.err)
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
			if f, why := la.Footprint(); f.Key != "k" || f.Lease != time.Second || f.Kind != footprint.Data || len(why) > 0 {
				t.Errorf("footprint %+v %v, want key k, a 1 s lease, data", f, why)
			}

			if _, err := take(a, la, "struck"); err == nil {
				t.Error("the struck acquire answered ok")
			}
			if lines := points.Unfired(); len(lines) > 0 {
				t.Errorf("failpoints did not fire: %v", lines)
			}
			// The relay records a dropped reply once it has held it for the
			// client's timeout, which may be after the program answered.
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			err = cluster.PollUntil(wctx, "the fault at the SET in the history", func(context.Context) (string, error) {
				if !slices.ContainsFunc(h.Ops(), func(op history.Op) bool { return op.Failpoint == tt.point && op.Command == "SET" }) {
					return fmt.Sprintf("%+v", h.Ops()), nil
				}
				return "", nil
			})
			if err != nil {
				t.Error(err)
			}
			state, err := cl.LockState(ctx, "struck")
			if err != nil {
				t.Fatal(err)
			}
			if state.Held != tt.ran {
				t.Errorf("after the struck SET the key is held: %v, want %v", state.Held, tt.ran)
			}
			if _, err := take(a, la, "after"); errors.Is(err, errDead) != tt.crashed {
				t.Errorf("after the struck SET: %v, want the program gone: %v", err, tt.crashed)
			}
			if !tt.crashed {
				return
			}
			// b's link to the master, cut, reaches b.
			cutMaster(t, cl, b, links, func() {
				if _, err := take(b, lb, "cut"); err == nil {
					t.Error("b's acquire while its link to the master is cut answered ok")
				}
			})
			if _, err := take(b, lb, "healed"); err != nil {
				t.Errorf("b's acquire after the heal: %v", err)
			}
		})
	}
}

// cutMaster runs f while c's link to the master Sentinel names, one of
// links, is cut.
func cutMaster(t *testing.T, cl *cluster.Cluster, c *harness.Client, links []*network.Link, f func()) {
	t.Helper()
	ctx := context.Background()
	master, err := askMaster(ctx, c.Endpoints().Sentinels[0])
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(links, func(l *network.Link) bool { return l.Upstream() == master })
	if i < 0 {
		t.Fatalf("the master %s is no data node", master)
	}
	heal, err := cl.Network().Cut(ctx, links[i])
	if err != nil {
		t.Fatal(err)
	}
	f()
	if err := heal(); err != nil {
		t.Fatal(err)
	}
}
