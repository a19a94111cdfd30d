package program

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/program/relay"
	"github.com/locklab/locklab/service/memcached"
)

// startMemcached starts the memcached topology through its seam service on
// local processes, or skips when memcached is not installed; it ends with
// the test.
func startMemcached(t *testing.T) *cluster.Cluster {
	t.Helper()
	if _, err := exec.LookPath("memcached"); err != nil {
		t.Skip("memcached is not installed (make deps installs it)")
	}
	cl, err := cluster.Start(context.Background(), cluster.Config{Topology: cluster.MemcachedTopology, Backend: local.Local{}, Service: memcached.Service{}})
	if errors.Is(err, memcached.ErrNoMemcached) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// joinMemcached joins client id to cl through its own link, struck by
// points, with a TTL of 300 ms and timeout as its timeout; it ends with
// the test.
func joinMemcached(t *testing.T, cl *cluster.Cluster, id int, timeout time.Duration, points *failpoint.Set) *harness.Client {
	t.Helper()
	h, _ := history.New("")
	c, _, err := harness.Join(context.Background(), cl, harness.ClientOptions{ID: id, TTL: 300 * time.Millisecond, Timeout: timeout, Service: memcached.Service{}}, h, points)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// envOf is the environment as a map.
func envOf(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// TestMemcachedEnvironment: on the memcached topology a lock program gets
// LOCKLAB_MEMCACHED from the service's Env, the client's link without a
// relay and the relay's address with one (the client's own Env left
// alone), plus LOCKLAB_TTL_MS and the rest, and no Redis address; a relay
// reads memcached, and a seam service whose protocol none reads is
// unrelayed, saying why.
func TestMemcachedEnvironment(t *testing.T) {
	cl := startMemcached(t)
	c := joinMemcached(t, cl, 1, time.Second, failpoint.NewSet(nil))
	own := envOf(c.Endpoints().Env)[EnvMemcached]
	if own == "" || own == cl.LockNodes()[0].Addr() {
		t.Fatalf("the client's %s=%q: want its link, not the server's own address", EnvMemcached, own)
	}
	if why := c.Endpoints().Unrelayed(); why != "" {
		t.Errorf("Unrelayed: %q, want memcached relayed", why)
	}
	upstream, proto, err := relayed(c.Endpoints())
	if err != nil || proto != relay.Memcached || !slices.Equal(upstream, []string{own}) {
		t.Fatalf("relayed: %q %v %v, want the link %s and memcached's protocol", upstream, proto, err, own)
	}

	env := envOf(environment(c, nil, nil))
	for _, k := range []string{EnvRedis, EnvNodes, EnvSentinels, EnvMySQL, EnvPostgres, EnvEtcd, EnvZooKeeper, EnvSession} {
		if v, ok := env[k]; ok {
			t.Errorf("%s=%s on memcached", k, v)
		}
	}
	if env[EnvMemcached] != own || env[EnvTTL] != "300" || env[EnvTimeout] != "1000" || env[EnvClient] != "1" {
		t.Errorf("environment without a relay %v", env)
	}

	r, err := relay.Listen(c, upstream, proto)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := envOf(environment(c, r, nil))[EnvMemcached]; got != r.Addrs()[0] {
		t.Errorf("with a relay %s=%q, want the relay's %s", EnvMemcached, got, r.Addrs()[0])
	}
	if got := envOf(c.Endpoints().Env)[EnvMemcached]; got != own {
		t.Errorf("the client's own %s became %q", EnvMemcached, got)
	}

	other := harness.Endpoints{Env: []string{"LOCKLAB_OTHER=127.0.0.1:1"}}
	if why := other.Unrelayed(); !strings.Contains(why, "no relay") {
		t.Errorf("a seam service no relay reads: Unrelayed %q, want why", why)
	}
	if _, _, err := relayed(other); err == nil {
		t.Error("relayed found a relay for a service no relay reads")
	}
}

// TestMemcachedRelay puts a relay between a client speaking memcached's
// text protocol and a real memcached: requests with data blocks, a get's
// items, noreply and quiet meta requests (each paired with its own reply,
// however empty), an error, a split-up big item; a dropped reply of the
// acquire's ADD (it ran, the connection ends); and a crash, after which
// no request reaches the server.
func TestMemcachedRelay(t *testing.T) {
	ctx := context.Background()
	cl := startMemcached(t)
	points := failpoint.NewSet([]failpoint.Point{{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 0, Action: failpoint.DropReply()}})
	c := joinMemcached(t, cl, 0, 500*time.Millisecond, points)
	upstream, proto, err := relayed(c.Endpoints())
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.Listen(c, upstream, proto)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	addr := r.Addrs()[0]
	server := cl.LockNodes()[0].Addr()

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // should the relay misread a reply
	br := bufio.NewReader(conn)
	big := strings.Repeat("x", 200<<10) // beyond every buffer: split reads
	for _, x := range []struct {
		name, send, want string
	}{
		{"add", "add k 0 60 2\r\nc0\r\n", "STORED\r\n"},
		{"add taken", "add k 0 60 2\r\nc1\r\n", "NOT_STORED\r\n"},
		{"a noreply delete, then version", "delete none noreply\r\nversion\r\n", "VERSION "},
		{"a quiet miss and hit, then mn", "mg none v q\r\nmg k v q\r\nmn\r\n", "VA 2"},
		{"a meta set and get", "ms m 2 T60\r\nhi\r\nmg m s v\r\n", "HD\r\nVA 2 s2\r\nhi\r\n"},
		{"an unknown command", "bogus\r\n", "ERROR\r\n"},
		{"a big item, noreply", "set big 0 0 204800 noreply\r\n" + big + "\r\nget big\r\n", "VALUE big 0 204800\r\n" + big + "\r\nEND\r\n"},
	} {
		if _, err := io.WriteString(conn, x.send); err != nil {
			t.Fatalf("%s: %v", x.name, err)
		}
		got := make([]byte, len(x.want))
		if _, err := io.ReadFull(br, got); err != nil || string(got) != x.want {
			t.Fatalf("%s: %q %v, want %q", x.name, clip(string(got)), err, clip(x.want))
		}
		if !strings.HasSuffix(x.want, "\n") {
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatalf("%s: the rest of the line: %v", x.name, err)
			}
		}
		if x.name == "a quiet miss and hit, then mn" {
			// The hit's data, then the program's own mn's MN, and
			// nothing of the misses nor of the relay's no-ops.
			if rest, err := readN(br, len("c0\r\nMN\r\n")); rest != "c0\r\nMN\r\n" {
				t.Fatalf("%s: then %q %v", x.name, rest, err)
			}
		}
	}

	// The acquire's ADD runs, and its reply is dropped: the relay ends the
	// connection once the client's timeout has passed.
	_, leave := c.Enter(ctx, failpoint.PhaseAcquire)
	io.WriteString(conn, "add dropped 0 60 1\r\nx\r\n")
	if line, err := br.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Errorf("after the dropped reply: %q %v, want the connection closed", line, err)
	}
	leave()
	if reply, err := memcached.Ask(ctx, server, "mg dropped v"); err != nil || !strings.HasPrefix(reply, "VA 1") {
		t.Errorf("the ADD whose reply was dropped: the item reads %q %v, want it stored", reply, err)
	}
	if lines := points.Unfired(); len(lines) > 0 {
		t.Errorf("failpoints did not fire: %v", lines)
	}

	// After a crash no request reaches memcached: the relay closes the
	// connection instead.
	conn, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br = bufio.NewReader(conn)
	if line, err := send(conn, br, "version\r\n"); !strings.HasPrefix(line, "VERSION") {
		t.Fatalf("version: %q %v", line, err)
	}
	c.Crash("test")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := send(conn, br, "add after 0 60 1\r\nx\r\n"); !errors.Is(err, io.EOF) {
		t.Errorf("after the crash: %q %v, want the connection closed", line, err)
	}
	if reply, err := memcached.Ask(ctx, server, "mg after v"); reply != "EN" {
		t.Errorf("after the crash the item reads %q %v: a request sent after the crash reached memcached", reply, err)
	}

	r.Close()
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("the relay still listens on %s after close", addr)
	}
}

// send writes request and reads one line of its reply.
func send(conn net.Conn, br *bufio.Reader, request string) (string, error) {
	if _, err := io.WriteString(conn, request); err != nil {
		return "", err
	}
	return br.ReadString('\n')
}

// readN reads n bytes.
func readN(br *bufio.Reader, n int) (string, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(br, b)
	return string(b), err
}

// memcachedPy is programs/memcached-add.py, run by Debian's python3, or
// a skip when it lacks pymemcache.
func memcachedPy(t *testing.T) string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import pymemcache").Run(); err != nil {
		t.Skip("python3 with pymemcache is not installed (make deps installs python3-pymemcache)")
	}
	p, err := filepath.Abs(filepath.Join("..", "programs", "memcached-add.py"))
	if err != nil {
		t.Fatal(err)
	}
	return "/usr/bin/python3 " + p
}

// TestMemcachedProgram: programs/memcached-add.py on the memcached
// topology, through its relay, takes a key another client then is refused,
// releases it, is told not-held for a key it does not hold or lost, and a
// crash after its acquire's ADD, the acquire's first command, strikes it:
// the ADD ran, and the process is gone.
func TestMemcachedProgram(t *testing.T) {
	ctx := context.Background()
	cmd := memcachedPy(t)
	cl := startMemcached(t)
	server := cl.LockNodes()[0].Addr()
	// Client 0's second ADD is the one struck.
	points := failpoint.NewSet([]failpoint.Point{{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 0, Skip: 1, Action: failpoint.Crash()}})
	a, b := joinMemcached(t, cl, 0, time.Second, points), joinMemcached(t, cl, 1, time.Second, points)
	la, lb := New(cmd)(a).(*Lock), New(cmd)(b).(*Lock)
	for _, l := range []*Lock{la, lb} {
		if l.p == nil || l.p.relay == nil {
			t.Fatalf("the program did not start with a relay: %v", l.err)
		}
		if err := l.Warm(ctx); err != nil {
			t.Fatal(err)
		}
	}
	acquire := func(c *harness.Client, l *Lock, key string) (harness.Lease, error) {
		actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
		defer leave()
		return l.Acquire(actx, key)
	}
	release := func(c *harness.Client, s harness.Lease) error {
		rctx, leave := c.Enter(ctx, failpoint.PhaseRelease)
		defer leave()
		return s.Release(rctx)
	}

	sa, err := acquire(a, la, "k")
	if err != nil {
		t.Fatalf("a's acquire: %v", err)
	}
	if reply, err := memcached.Ask(ctx, server, "mg k t"); !strings.HasPrefix(reply, "HD t") || reply == "HD t-1" {
		t.Errorf("a holds k, which reads %q %v: want an item with an expiry", reply, err)
	}
	if _, err := acquire(b, lb, "k"); !errors.Is(err, harness.ErrNotAcquired) {
		t.Errorf("b's acquire of a held key: %v, want refused", err)
	}
	if err := release(a, sa); err != nil {
		t.Errorf("a's release: %v", err)
	}
	if reply, err := memcached.Ask(ctx, server, "mg k"); reply != "EN" {
		t.Errorf("after the release k reads %q %v, want no item", reply, err)
	}
	sb, err := acquire(b, lb, "k")
	if err != nil {
		t.Fatalf("b's acquire of a released key: %v", err)
	}
	// b's item gone (as if it expired): its release is not-held.
	if reply, err := memcached.Ask(ctx, server, "delete k"); reply != "DELETED" {
		t.Fatalf("delete: %q %v", reply, err)
	}
	if err := release(b, sb); !errors.Is(err, harness.ErrNotHeld) {
		t.Errorf("b's release of a lost key: %v, want not-held", err)
	}
	if n := points.Reached(failpoint.AfterCommand(failpoint.PhaseAcquire, 1), 0); n != 1 {
		t.Errorf("a's acquire's ADD reached the failpoint %d time(s), want once", n)
	}

	if _, err := acquire(a, la, "struck"); err == nil {
		t.Error("a's acquire struck by a crash after its ADD answered ok")
	}
	if reply, err := memcached.Ask(ctx, server, "mg struck"); reply != "HD" {
		t.Errorf("the struck ADD: the item reads %q %v, want it stored", reply, err)
	}
	if lines := points.Unfired(); len(lines) > 0 {
		t.Errorf("failpoints did not fire: %v", lines)
	}
	if _, err := acquire(a, la, "after"); !errors.Is(err, errDead) {
		t.Errorf("after the crash: %v, want the program gone", err)
	}
}
