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

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/program/relay"
	"github.com/locklab/locklab/service/zookeeper"
)

// TestZooKeeperRelay puts a relay between go-zookeeper and a real
// ZooKeeper ensemble, as a program on the zookeeper topology gets it:
// LOCKLAB_ZOOKEEPER names the relay's listeners; requests and their
// replies (a server error among them) pass; a create paused past the
// session timeout leaves the session alive, its pings passing meanwhile;
// a create struck by a crash before it never reaches the servers; one
// whose reply is dropped runs, and its connection ends.
func TestZooKeeperRelay(t *testing.T) {
	ctx := context.Background()
	cl := startTopology(t, cluster.ZooKeeperTopology)
	const ttl = time.Second
	h, _ := history.New("")
	admin := zookeeper.Of(joinService(t, cl, 9, ttl, failpoint.NewSet(nil), h))
	tests := []struct {
		name  string
		point failpoint.Point
		ok    bool // whether the struck create answers
		ran   bool // whether it reached the servers
	}{
		{"paused past the session timeout", failpoint.Point{Name: failpoint.BeforeCommand(failpoint.PhaseAcquire, 1), Client: 10, Action: failpoint.Pause(5 * ttl / 2)}, true, true},
		{"crash before", failpoint.Point{Name: failpoint.BeforeCommand(failpoint.PhaseAcquire, 1), Client: 11, Action: failpoint.Crash()}, false, false},
		{"dropped reply", failpoint.Point{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 12, Action: failpoint.DropReply()}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			points := failpoint.NewSet([]failpoint.Point{tt.point})
			h, _ := history.New("")
			c := joinService(t, cl, tt.point.Client, ttl, points, h)
			if why := c.Endpoints().Unrelayed(); why != "" {
				t.Fatalf("Unrelayed: %q, want ZooKeeper relayed", why)
			}
			upstream, proto, err := relayed(c.Endpoints())
			if err != nil || proto != relay.ZooKeeper || len(upstream) != len(cl.LockNodes()) {
				t.Fatalf("relayed: %q %v %v, want each server's link and ZooKeeper's protocol", upstream, proto, err)
			}
			r, err := relay.Listen(c, upstream, proto)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			addrs := strings.Split(envOf(environment(c, r, nil))[EnvZooKeeper], ",")
			if !slices.Equal(addrs, r.Addrs()) {
				t.Fatalf("%s=%q, want the relay's %q", EnvZooKeeper, addrs, r.Addrs())
			}
			conn, _, err := zk.Connect(addrs, ttl, zk.WithLogInfo(false), zk.WithLogger(zkQuiet{}))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			base := "/relay-" + strings.ReplaceAll(tt.name, " ", "-")
			// Ephemeral: it lives as long as the session does.
			if _, err := conn.Create(base, []byte("x"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatalf("create %s: %v", base, err)
			}
			if _, err := conn.Create(base, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNodeExists) {
				t.Errorf("create %s again: %v, want the server's node-exists", base, err)
			}
			if data, _, err := conn.Get(base); err != nil || string(data) != "x" {
				t.Errorf("get %s: %q %v", base, data, err)
			}

			_, leave := c.Enter(ctx, failpoint.PhaseAcquire)
			_, err = conn.Create(base+"-struck", nil, 0, zk.WorldACL(zk.PermAll))
			leave()
			if (err == nil) != tt.ok {
				t.Errorf("the struck create: %v, want it answered: %v", err, tt.ok)
			}
			if ok, _, err := admin.Exists(base + "-struck"); err != nil || ok != tt.ran {
				t.Errorf("the struck create's node exists: %v %v, want %v", ok, err, tt.ran)
			}
			if lines := points.Unfired(); len(lines) > 0 {
				t.Errorf("failpoints did not fire: %v", lines)
			}
			struck := false
			for _, op := range h.Ops() {
				struck = struck || (op.Failpoint == tt.point.Name && op.Command == "CREATE")
			}
			if !struck {
				t.Errorf("no fault at the create in the history: %+v", h.Ops())
			}
			if tt.ok {
				// The session outlived the pause: its pings passed.
				if ok, _, err := admin.Exists(base); err != nil || !ok {
					t.Errorf("after the pause the session's ephemeral node: %v %v, want it alive", ok, err)
				}
				if _, err := conn.Create(base+"-after", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
					t.Errorf("a create after the pause: %v", err)
				}
			}
		})
	}
}

// zkQuiet drops go-zookeeper's log of the connections a fault ends.
type zkQuiet struct{}

func (zkQuiet) Printf(string, ...any) {}

// zkPy is programs/zk-lock.py, run by Debian's python3, or a skip when it
// lacks kazoo.
func zkPy(t *testing.T) string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import kazoo").Run(); err != nil {
		t.Skip("python3 with kazoo is not installed (make deps installs python3-kazoo)")
	}
	p, err := filepath.Abs(filepath.Join("..", "programs", "zk-lock.py"))
	if err != nil {
		t.Fatal(err)
	}
	return "/usr/bin/python3 " + p
}

// TestZooKeeperProgram: programs/zk-lock.py (kazoo) on the zookeeper
// topology, through its relay, takes a key another client then is refused
// and releases it; a crash after its acquire's first request strikes it:
// the process is gone.
func TestZooKeeperProgram(t *testing.T) {
	// Client 0's second acquire is the one struck.
	acquire, points, _ := relayedPair(t, cluster.ZooKeeperTopology, zkPy(t), failpoint.AfterCommand(failpoint.PhaseAcquire, 1))
	if n := points.Reached(failpoint.AfterCommand(failpoint.PhaseAcquire, 1), 0); n != 1 {
		t.Errorf("a's acquire's first request reached the failpoint %d time(s), want once", n)
	}
	if err := acquire("struck"); err == nil {
		t.Error("a's acquire struck by a crash after its first request answered ok")
	}
	if lines := points.Unfired(); len(lines) > 0 {
		t.Errorf("failpoints did not fire: %v", lines)
	}
	if err := acquire("after"); !errors.Is(err, errDead) {
		t.Errorf("after the crash: %v, want the program gone", err)
	}
}
