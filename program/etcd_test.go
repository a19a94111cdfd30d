package program

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/program/relay"
	"github.com/locklab/locklab/service/etcd"
)

// TestEtcdEnvironment: on the etcd topology a lock program gets
// LOCKLAB_ETCD, each member through its client's own link, and the lease
// to ask for in LOCKLAB_SESSION_MS (whole seconds); no Redis address; and
// a relay, which reads etcd's gRPC (TestEtcdRelay).
func TestEtcdEnvironment(t *testing.T) {
	cl, c, links := joinTopology(t, cluster.EtcdTopology, 1, time.Second)
	env := map[string]string{}
	for _, kv := range environment(c, nil, nil) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, k := range []string{EnvRedis, EnvNodes, EnvSentinels, EnvMySQL, EnvPostgres} {
		if v, ok := env[k]; ok {
			t.Errorf("%s=%s on etcd", k, v)
		}
	}
	var want []string
	for i, l := range links {
		want = append(want, l.Addr())
		if l.Upstream() != cl.LockNodes()[i].Addr() {
			t.Errorf("link %d goes to %s, not member %s", i, l.Upstream(), cl.LockNodes()[i].Addr())
		}
	}
	if got := env[EnvEtcd]; got != strings.Join(want, ",") || len(want) != cluster.EtcdMembers {
		t.Errorf("%s=%q, want the client's links %q", EnvEtcd, got, want)
	}
	if env[EnvSession] != "1000" || env[EnvTTL] != "300" || env[EnvClient] != "1" {
		t.Errorf("environment %v", env)
	}
	if why := c.Endpoints().Unrelayed(); why != "" {
		t.Errorf("Unrelayed: %q, want etcd relayed", why)
	}
}

// TestEtcdRelay puts a relay between etcd's own Go client (gRPC) and a
// real etcd cluster, as a program on the etcd topology gets it:
// LOCKLAB_ETCD names the relay's listeners, one per member; unary calls
// and their replies (a failed comparison among them) pass; a Put paused
// past its lease's TTL leaves the lease alive, its keep-alives passing
// meanwhile on their stream; a Put struck by a crash before it never
// reaches the members; one whose reply is dropped runs, and the client
// sees its connection end instead of the reply.
func TestEtcdRelay(t *testing.T) {
	ctx := context.Background()
	cl := startTopology(t, cluster.EtcdTopology)
	const ttl = time.Second
	h, _ := history.New("")
	admin := etcd.Of(joinService(t, cl, 9, ttl, failpoint.NewSet(nil), h))
	tests := []struct {
		name  string
		point failpoint.Point
		ok    bool // whether the struck Put answers
		ran   bool // whether it reached the members
	}{
		{"paused past the lease", failpoint.Point{Name: failpoint.BeforeCommand(failpoint.PhaseAcquire, 1), Client: 10, Action: failpoint.Pause(3 * ttl)}, true, true},
		{"crash before", failpoint.Point{Name: failpoint.BeforeCommand(failpoint.PhaseAcquire, 1), Client: 11, Action: failpoint.Crash()}, false, false},
		{"dropped reply", failpoint.Point{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 12, Action: failpoint.DropReply()}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			points := failpoint.NewSet([]failpoint.Point{tt.point})
			h, _ := history.New("")
			c := joinService(t, cl, tt.point.Client, ttl, points, h)
			if why := c.Endpoints().Unrelayed(); why != "" {
				t.Fatalf("Unrelayed: %q, want etcd relayed", why)
			}
			upstream, proto, err := relayed(c.Endpoints())
			if err != nil || proto != relay.Etcd || len(upstream) != len(cl.LockNodes()) {
				t.Fatalf("relayed: %q %v %v, want each member's link and etcd's protocol", upstream, proto, err)
			}
			r, err := relay.Listen(c, upstream, proto)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			addrs := strings.Split(envOf(environment(c, r, nil))[EnvEtcd], ",")
			if !slices.Equal(addrs, r.Addrs()) {
				t.Fatalf("%s=%q, want the relay's %q", EnvEtcd, addrs, r.Addrs())
			}
			// One member: the client's connection is the one struck.
			cli, err := clientv3.New(clientv3.Config{Endpoints: addrs[:1], DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			base := "/relay/" + strings.ReplaceAll(tt.name, " ", "-")
			lease, err := cli.Grant(ctx, int64(ttl/time.Second))
			if err != nil {
				t.Fatalf("grant: %v", err)
			}
			alive, err := cli.KeepAlive(ctx, lease.ID)
			if err != nil {
				t.Fatalf("keep-alive: %v", err)
			}
			go func() {
				for range alive {
				}
			}()
			if _, err := cli.Put(ctx, base, "x", clientv3.WithLease(lease.ID)); err != nil {
				t.Fatalf("put %s: %v", base, err)
			}
			txn, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(base), "=", 0)).Then(clientv3.OpPut(base, "y")).Commit()
			if err != nil || txn.Succeeded {
				t.Errorf("a txn on a key that exists: %+v %v, want its comparison failed", txn, err)
			}
			if got, err := cli.Get(ctx, base); err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "x" {
				t.Errorf("get %s: %+v %v", base, got, err)
			}

			_, leave := c.Enter(ctx, failpoint.PhaseAcquire)
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err = cli.Put(pctx, base+"-struck", "z")
			cancel()
			leave()
			if (err == nil) != tt.ok {
				t.Errorf("the struck put: %v, want it answered: %v", err, tt.ok)
			}
			if got, err := admin.Get(ctx, base+"-struck"); err != nil || (len(got.Kvs) == 1) != tt.ran {
				t.Errorf("the struck put's key: %+v %v, want it there: %v", got, err, tt.ran)
			}
			if lines := points.Unfired(); len(lines) > 0 {
				t.Errorf("failpoints did not fire: %v", lines)
			}
			struck := false
			for _, op := range h.Ops() {
				struck = struck || (op.Failpoint == tt.point.Name && op.Command == "PUT")
			}
			if !struck {
				t.Errorf("no fault at the put in the history: %+v", h.Ops())
			}
			if tt.ok {
				// The lease outlived the pause: its keep-alives passed
				// (an expired lease has a TTL of -1; a live one's whole
				// seconds left may be 0).
				if got, err := admin.TimeToLive(ctx, lease.ID); err != nil || got.TTL < 0 {
					t.Errorf("after the pause the lease: TTL %d %v, want it alive", got.TTL, err)
				}
				if _, err := cli.Put(ctx, base+"-after", "w"); err != nil {
					t.Errorf("a put after the pause: %v", err)
				}
			}
		})
	}
}

// etcdPy is programs/etcd-lease.py, run by Debian's python3, or a skip
// when it lacks python3-etcd3.
func etcdPy(t *testing.T) string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import etcd3").Run(); err != nil {
		t.Skip("python3 with etcd3 is not installed (make deps installs python3-etcd3)")
	}
	p, err := filepath.Abs(filepath.Join("..", "programs", "etcd-lease.py"))
	if err != nil {
		t.Fatal(err)
	}
	return "/usr/bin/python3 " + p
}

// TestEtcdProgram: programs/etcd-lease.py (python3-etcd3, grpcio) on the
// etcd topology, through its relay, takes a key another client then is
// refused (its watch passing the relay) and releases it; a crash after
// its acquire's second request (the Txn that queues its key) strikes it
// there: the process is gone.
func TestEtcdProgram(t *testing.T) {
	// Client 0's second acquire is the one struck.
	crash := failpoint.AfterCommand(failpoint.PhaseAcquire, 2)
	acquire, points, h := relayedPair(t, cluster.EtcdTopology, etcdPy(t), crash)
	if err := acquire("struck"); err == nil {
		t.Error("a's acquire struck by a crash after its Txn answered ok")
	}
	if lines := points.Unfired(); len(lines) > 0 {
		t.Errorf("failpoints did not fire: %v", lines)
	}
	struck := false
	for _, op := range h.Ops() {
		struck = struck || (op.Failpoint == crash && op.Command == "TXN")
	}
	if !struck {
		t.Errorf("no crash at the Txn in the history: %+v", h.Ops())
	}
	if err := acquire("after"); !errors.Is(err, errDead) {
		t.Errorf("after the crash: %v, want the program gone", err)
	}
}
