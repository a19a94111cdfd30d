package network

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startTestRedis starts a throwaway redis-server on a free port of 127.0.0.1,
// waits until it answers and kills it when the test ends. It returns its address.
func startTestRedis(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	ln.Close()

	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})

	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
			return addr
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on %s not up within 5s: %v", addr, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testClient returns a go-redis client that never retries and times out fast, so
// each fault shows up in the result of the very command it hit. One connection
// keeps the tests deterministic: a command after a warm-up PING reuses it.
func testClient(tb testing.TB, addr string, timeout time.Duration) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:          addr,
		MaxRetries:    -1,
		DialerRetries: 1, // go-redis otherwise redials 5 times, 100 ms apart, and a Cut would look slow
		DialTimeout:   timeout,
		ReadTimeout:   timeout,
		WriteTimeout:  timeout,
		PoolSize:      1,
	})
	tb.Cleanup(func() { c.Close() })
	return c
}

// startTestNetwork starts a Network that is closed when the test ends.
func startTestNetwork(tb testing.TB) *Proxy {
	tb.Helper()
	n, err := Start(context.Background())
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

func testLink(tb testing.TB, n *Proxy, name, upstream string) *Link {
	tb.Helper()
	l, err := n.Link(context.Background(), name, upstream)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// awaitPing polls until c answers PING. go-redis probes a failed address only
// once a second, so a healed link can take that long to be used again.
func awaitPing(tb testing.TB, c *redis.Client) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := c.Ping(context.Background()).Err()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no PING answer within 5s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ping(t *testing.T, c *redis.Client) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	err := c.Ping(context.Background()).Err()
	return time.Since(start), err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// linkState is what the toxiproxy API reports about a link's proxy.
type linkState struct {
	enabled bool
	toxics  int
}

func stateOf(t *testing.T, n *Proxy, l *Link) linkState {
	t.Helper()
	p, err := n.client.Proxy(l.Name())
	if err != nil {
		t.Fatal(err)
	}
	// The link listens itself: toxiproxy's proxy of its name stays disabled.
	l.connMu.Lock()
	up := l.listener != nil
	l.connMu.Unlock()
	return linkState{enabled: up, toxics: len(p.ActiveToxics)}
}

// assertClean fails the test unless the API reports l enabled and without
// toxics, that is, every fault on it undone.
func assertClean(t *testing.T, n *Proxy, l *Link) {
	t.Helper()
	if got, want := stateOf(t, n, l), (linkState{enabled: true}); got != want {
		t.Errorf("link %s is %+v; want %+v (no fault)", l.Name(), got, want)
	}
}

func TestLinkPassesCommands(t *testing.T) {
	node := startTestRedis(t)
	n := startTestNetwork(t)
	l := testLink(t, n, "c1-n1", node)

	if l.Name() != "c1-n1" || l.Upstream() != node {
		t.Errorf("Name, Upstream = %q, %q; want %q, %q", l.Name(), l.Upstream(), "c1-n1", node)
	}
	host, port, err := net.SplitHostPort(l.Addr())
	if err != nil || host != "127.0.0.1" || port == "0" || l.Addr() == node {
		t.Fatalf("Addr = %q; want a bound port of 127.0.0.1 other than the node's", l.Addr())
	}

	ctx := context.Background()
	c := testClient(t, l.Addr(), 300*time.Millisecond)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := testClient(t, node, time.Second).Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET k on the node = %q, %v; want \"v\"", got, err)
	}
}

func TestLinkRejectsBadNamesAndDuplicates(t *testing.T) {
	n := startTestNetwork(t)
	ctx := context.Background()
	testLink(t, n, "dup", "127.0.0.1:1")
	for _, name := range []string{"", "a/b", "a b", "dup"} {
		if _, err := n.Link(ctx, name, "127.0.0.1:1"); err == nil {
			t.Errorf("Link(%q) succeeded; want an error", name)
		}
	}
}

func TestCut(t *testing.T) {
	node := startTestRedis(t)
	n := startTestNetwork(t)
	l := testLink(t, n, "c1-n1", node)
	c := testClient(t, l.Addr(), 300*time.Millisecond)
	awaitPing(t, c)

	heal, err := n.Cut(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	defer heal()
	d, err := ping(t, c)
	if err == nil || isTimeout(err) || d > 100*time.Millisecond {
		t.Errorf("PING over a cut link = %v after %v; want a non-timeout error well under the 300ms read timeout", err, d)
	}
	if conn, err := net.Dial("tcp", l.Addr()); err == nil {
		conn.Close()
		t.Error("a cut link accepted a new connection")
	}

	if err := heal(); err != nil {
		t.Fatal(err)
	}
	awaitPing(t, c)
	assertClean(t, n, l)
}

func TestDelay(t *testing.T) {
	const latency = 100 * time.Millisecond
	node := startTestRedis(t)
	n := startTestNetwork(t)
	l := testLink(t, n, "c1-n1", node)
	c := testClient(t, l.Addr(), time.Second) // a delayed PING takes 2×latency
	awaitPing(t, c)

	heal, err := n.Delay(context.Background(), latency, 0, l)
	if err != nil {
		t.Fatal(err)
	}
	defer heal()
	// The connection was open before the fault: latency applies to it too.
	if d, err := ping(t, c); err != nil || d < 2*latency {
		t.Errorf("delayed PING = %v after %v; want success after at least %v", err, d, 2*latency)
	}

	if err := heal(); err != nil {
		t.Fatal(err)
	}
	if d, err := ping(t, c); err != nil || d >= latency {
		t.Errorf("healed PING = %v after %v; want success in under %v", err, d, latency)
	}
	assertClean(t, n, l)
}

func TestBlackHole(t *testing.T) {
	tests := []struct {
		dir    Direction
		wasSet int64 // what EXISTS k says on the node after the lost SET
	}{
		{Upstream, 0},   // the request was lost: the node never saw it
		{Downstream, 1}, // the reply was lost: the node did execute it
	}
	for _, tt := range tests {
		t.Run(string(tt.dir), func(t *testing.T) {
			ctx := context.Background()
			node := startTestRedis(t)
			direct := testClient(t, node, time.Second)
			n := startTestNetwork(t)
			l := testLink(t, n, "c1-n1", node)
			c := testClient(t, l.Addr(), 300*time.Millisecond)
			awaitPing(t, c) // SET must go out on an open connection, not in a handshake
			raw, err := net.Dial("tcp", l.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()

			heal, err := n.BlackHole(ctx, tt.dir, l)
			if err != nil {
				t.Fatal(err)
			}
			defer heal()
			if err := c.Set(ctx, "k", "v", 0).Err(); !isTimeout(err) {
				t.Fatalf("SET through a %s black hole = %v; want a timeout", tt.dir, err)
			}
			if got, err := direct.Exists(ctx, "k").Result(); err != nil || got != tt.wasSet {
				t.Fatalf("EXISTS k on the node = %d, %v; want %d", got, err, tt.wasSet)
			}

			if err := heal(); err != nil {
				t.Fatal(err)
			}
			// Heal closes the connections that were in the hole.
			raw.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := raw.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("read on a black-holed connection after Heal = %v; want EOF", err)
			}
			awaitPing(t, c)
			if err := c.Set(ctx, "k2", "v", 0).Err(); err != nil {
				t.Fatalf("SET after Heal: %v", err)
			}
			// Bytes lost in the hole stay lost after Heal.
			if got, err := direct.Exists(ctx, "k").Result(); err != nil || got != tt.wasSet {
				t.Errorf("EXISTS k on the node after Heal = %d, %v; want %d", got, err, tt.wasSet)
			}
			assertClean(t, n, l)
		})
	}
}

// TestToxicsKeepTheStream adds and heals toxics while pipelines cross the
// link: the bytes a connection's copy hands to toxiproxy mid-stream arrive
// whole and in order, in both directions.
func TestToxicsKeepTheStream(t *testing.T) {
	const rounds, batch = 6, 3000
	node := startTestRedis(t)
	n := startTestNetwork(t)
	l := testLink(t, n, "c1-n1", node)
	c := testClient(t, l.Addr(), 5*time.Second)
	awaitPing(t, c)
	ctx := context.Background()

	faults := make(chan error, 1)
	go func() {
		defer close(faults)
		for range rounds {
			heal, err := n.Delay(ctx, time.Millisecond, 0, l)
			if err != nil {
				faults <- err
				return
			}
			time.Sleep(5 * time.Millisecond)
			if err := heal(); err != nil {
				faults <- err
				return
			}
		}
	}()
	want := int64(0)
	for range rounds {
		cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for range batch {
				p.Incr(ctx, "n")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range cmds {
			want++
			if got := cmd.(*redis.IntCmd).Val(); got != want {
				t.Fatalf("INCR reply %d; want %d: the stream lost or reordered bytes", got, want)
			}
		}
	}
	if err := <-faults; err != nil {
		t.Fatal(err)
	}
	assertClean(t, n, l)
}

// fault names one way to break a link, with the state the API reports while it alone is applied.
type fault struct {
	name   string
	inject func(ctx context.Context, n *Proxy, links ...*Link) (Heal, error)
	state  linkState
}

// testFaults returns one of each kind of fault.
func testFaults() []fault {
	return []fault{
		{"cut", func(ctx context.Context, n *Proxy, ls ...*Link) (Heal, error) { return n.Cut(ctx, ls...) },
			linkState{enabled: false}},
		{"delay", func(ctx context.Context, n *Proxy, ls ...*Link) (Heal, error) {
			return n.Delay(ctx, 10*time.Millisecond, 5*time.Millisecond, ls...)
		}, linkState{enabled: true, toxics: 2}},
		{"black-hole-up", func(ctx context.Context, n *Proxy, ls ...*Link) (Heal, error) {
			return n.BlackHole(ctx, Upstream, ls...)
		}, linkState{enabled: true, toxics: 1}},
		{"black-hole-down", func(ctx context.Context, n *Proxy, ls ...*Link) (Heal, error) {
			return n.BlackHole(ctx, Downstream, ls...)
		}, linkState{enabled: true, toxics: 1}},
	}
}

func TestHealTwiceIsHarmless(t *testing.T) {
	node := startTestRedis(t)
	n := startTestNetwork(t)
	l := testLink(t, n, "c1-n1", node)
	c := testClient(t, l.Addr(), 300*time.Millisecond)
	for _, f := range testFaults() {
		t.Run(f.name, func(t *testing.T) {
			heal, err := f.inject(context.Background(), n, l)
			if err != nil {
				t.Fatal(err)
			}
			if got := stateOf(t, n, l); got != f.state {
				t.Errorf("faulted link is %+v; want %+v", got, f.state)
			}
			for i := range 2 {
				if err := heal(); err != nil {
					t.Fatalf("Heal #%d: %v", i+1, err)
				}
			}
			assertClean(t, n, l)
			awaitPing(t, c)
		})
	}
}

func TestOneFaultOnTwoLinks(t *testing.T) {
	node := startTestRedis(t)
	n := startTestNetwork(t)
	a, b := testLink(t, n, "a", node), testLink(t, n, "b", node)
	bystander := testLink(t, n, "bystander", node)
	for _, f := range testFaults() {
		t.Run(f.name, func(t *testing.T) {
			heal, err := f.inject(context.Background(), n, a, b, a) // a repeated link is faulted once
			if err != nil {
				t.Fatal(err)
			}
			defer heal()
			for _, l := range []*Link{a, b} {
				if got := stateOf(t, n, l); got != f.state {
					t.Errorf("link %s is %+v; want %+v", l.Name(), got, f.state)
				}
			}
			assertClean(t, n, bystander)
			if err := heal(); err != nil {
				t.Fatal(err)
			}
			for _, l := range []*Link{a, b} {
				assertClean(t, n, l)
			}
		})
	}
	for _, l := range []*Link{a, b, bystander} {
		awaitPing(t, testClient(t, l.Addr(), 300*time.Millisecond))
	}
}

func TestOverlappingFaultsHealInEitherOrder(t *testing.T) {
	node := startTestRedis(t)
	n := startTestNetwork(t)
	l := testLink(t, n, "c1-n1", node)
	ctx := context.Background()
	faults := testFaults()
	pairs := [][2]fault{
		{faults[0], faults[0]}, // two cuts
		{faults[1], faults[1]}, // two delays
		{faults[2], faults[3]}, // black holes both ways
		{faults[0], faults[1]}, // cut and delay
		{faults[1], faults[2]}, // delay and black hole
	}
	for _, p := range pairs {
		for firstHealed, order := range []string{"in-order", "in-reverse"} {
			t.Run(fmt.Sprintf("%s+%s/heal-%s", p[0].name, p[1].name, order), func(t *testing.T) {
				var heals [2]Heal
				for i, f := range p {
					heal, err := f.inject(ctx, n, l)
					if err != nil {
						t.Fatal(err)
					}
					defer heal()
					heals[i] = heal
				}
				if err := heals[firstHealed](); err != nil {
					t.Fatal(err)
				}
				if got, want := stateOf(t, n, l), p[1-firstHealed].state; got != want {
					t.Errorf("with one fault healed the link is %+v; want %+v (the other fault alone)", got, want)
				}
				if err := heals[1-firstHealed](); err != nil {
					t.Fatal(err)
				}
				assertClean(t, n, l)
			})
		}
	}
	awaitPing(t, testClient(t, l.Addr(), 300*time.Millisecond))
}

func TestFailedFaultUndoesWhatItApplied(t *testing.T) {
	n := startTestNetwork(t)
	ctx := context.Background()
	ok := testLink(t, n, "ok", "127.0.0.1:1")
	gone := testLink(t, n, "gone", "127.0.0.1:1")
	// Delete gone's proxy behind the Network's back, so any toxic on it fails
	// at the API. A cut asks nothing of the API (the link closes its own
	// listener) and cannot fail so.
	gone.mu.Lock()
	err := gone.proxy.Delete()
	gone.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}

	for _, f := range testFaults() {
		if f.name == "cut" {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			heal, err := f.inject(ctx, n, ok, gone)
			if err == nil || !strings.Contains(err.Error(), "link gone") {
				t.Errorf("fault on a deleted link = %v; want an error naming link gone", err)
			}
			if err := heal(); err != nil {
				t.Errorf("Heal of a failed fault = %v; want nil", err)
			}
			assertClean(t, n, ok)
		})
	}

	other := startTestNetwork(t)
	foreign := testLink(t, other, "foreign", "127.0.0.1:1")
	for _, links := range [][]*Link{nil, {nil}, {ok, foreign}} {
		if _, err := n.Cut(ctx, links...); err == nil {
			t.Errorf("Cut(%v) succeeded; want an error", links)
		}
	}
	assertClean(t, n, ok)
	if _, err := n.Delay(ctx, 0, 0, ok); err == nil {
		t.Error("Delay of 0 succeeded; want an error")
	}
	if _, err := n.BlackHole(ctx, "sideways", ok); err == nil {
		t.Error("BlackHole sideways succeeded; want an error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := n.Cut(cancelled, ok); !errors.Is(err, context.Canceled) {
		t.Errorf("Cut with a cancelled context = %v; want context.Canceled", err)
	}
}

func TestClose(t *testing.T) {
	node := startTestRedis(t)
	n, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l := testLink(t, n, "c1-n1", node)
	c := testClient(t, l.Addr(), 300*time.Millisecond)
	awaitPing(t, c)
	ctx := context.Background()
	heal, err := n.Delay(ctx, 10*time.Millisecond, 0, l)
	if err != nil {
		t.Fatal(err)
	}

	for i := range 2 {
		if err := n.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	if conn, err := net.Dial("tcp", l.Addr()); err == nil {
		conn.Close()
		t.Error("a link of a closed network accepted a connection")
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Error("PING through a closed network succeeded")
	}
	if err := heal(); err != nil {
		t.Errorf("Heal after Close = %v; want nil", err)
	}
	if _, err := n.Link(ctx, "late", node); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Link after Close = %v; want net.ErrClosed", err)
	}
	if _, err := n.Cut(ctx, l); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Cut after Close = %v; want net.ErrClosed", err)
	}
}

// TestCloseLeavesNoGoroutines closes a Network with faults still applied and
// connections open, and checks that every goroutine it started ends.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	node := startTestRedis(t)
	ctx := context.Background()
	before := runtime.NumGoroutine()

	n, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := testLink(t, n, "c1-n1", node)
	c := redis.NewClient(&redis.Options{Addr: l.Addr(), MaxRetries: -1, ReadTimeout: 300 * time.Millisecond})
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Delay(ctx, time.Millisecond, 0, l); err != nil {
		t.Fatal(err)
	}
	if _, err := n.BlackHole(ctx, Downstream, l); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	c.Close()

	// Connections wind down asynchronously (the API's keep-alive client sees EOF
	// after Shutdown), hence a bounded wait.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines before, %d after Close:\n%s", before, runtime.NumGoroutine(), buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func benchmarkPing(b *testing.B, addr string) {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx := context.Background()
	for b.Loop() {
		if err := c.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPingDirect(b *testing.B) {
	benchmarkPing(b, startTestRedis(b))
}

func BenchmarkPingThroughLink(b *testing.B) {
	node := startTestRedis(b)
	benchmarkPing(b, testLink(b, startTestNetwork(b), "c1-n1", node).Addr())
}

// TestStablePortSkipsReserved: a port handed out and not given back is
// never handed out again, so that a cut link's heal finds it free; once
// every port is held, StablePort says so rather than share one.
func TestStablePortSkipsReserved(t *testing.T) {
	var held []int
	defer func() {
		for _, p := range held {
			ReleasePort(p)
		}
	}()
	for p := stableLow; p <= stableHigh; p++ {
		reserved.Lock()
		if !reserved.ports[p] {
			reserved.ports[p] = true
			held = append(held, p)
		}
		reserved.Unlock()
	}
	if p, err := StablePort(); err == nil {
		t.Errorf("StablePort handed out %d, which is held", p)
	}
	ReleasePort(held[0])
	if p, err := StablePort(); err == nil && p != held[0] {
		t.Errorf("StablePort handed out %d, which is held", p)
	}
}

// BenchmarkPingThroughPlainProxy is the floor any user-space TCP proxy
// stands on: a bare read-then-write copy of each direction, no toxics, no
// bookkeeping. A link costs what this costs, less is out of reach.
func BenchmarkPingThroughPlainProxy(b *testing.B) {
	node := startTestRedis(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", node)
			if err != nil {
				client.Close()
				continue
			}
			for _, ends := range [][2]net.Conn{{client, up}, {up, client}} {
				go func() {
					defer ends[1].Close()
					buf := make([]byte, pumpBuffer)
					for {
						n, err := ends[0].Read(buf)
						if n > 0 {
							if _, err := ends[1].Write(buf[:n]); err != nil {
								return
							}
						}
						if err != nil {
							return
						}
					}
				}()
			}
		}
	}()
	benchmarkPing(b, ln.Addr().String())
}
