package zookeeper

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/harness/socket"
	"github.com/locklab/locklab/program/relay"
)

// Of is client c's session with the ensemble's servers, each reached
// through its own link, or nil on another service. Its session timeout is
// the client's TTL (the servers allow 200 ms to 60 s). Its connections
// stop while the client is paused, its heartbeats included, as a stopped
// process's do: a pause past the session timeout lets the session expire
// on the servers, and its ephemeral nodes go with it. A crash closes its
// sockets without ending the session, so the session expires on the
// servers as a crashed process's does. Its requests meet the failpoints
// armed on the lock's commands as a lock program's do: the session talks
// to the servers through a relay (Dial).
func Of(c *harness.Client) *zk.Conn {
	s, _ := c.Handle().(*session)
	if s == nil {
		return nil
	}
	return s.conn
}

// Silence is how long client c's session has heard nothing from any
// server, as the client sees it (a paused client hears nothing until it
// resumes), or 0 on another service: past the session timeout, the
// servers may have expired the session, and a holder must count its lock
// as lost. The servers answer a heartbeat every third of the timeout.
func Silence(c *harness.Client) time.Duration {
	s, _ := c.Handle().(*session)
	if s == nil {
		return 0
	}
	return time.Since(s.born) - time.Duration(s.heard.Load())
}

// session is a client's ZooKeeper session and the sockets it dialed,
// which a crash closes: the client's harness.Handle.
type session struct {
	c     *harness.Client
	conn  *zk.Conn
	relay *relay.Relay // between the session and the client's links
	born  time.Time    // when it was opened, on the monotonic clock
	heard atomic.Int64 // when a server was last heard, in ns since born

	mu    sync.Mutex
	socks map[net.Conn]bool
}

// Dial starts c's session with the servers at addrs, c's links to them;
// zk.Connect dials in the background and fails only on an empty list.
// Its sockets are dialled here rather than by c.DialContext, so that a
// server is heard as its bytes arrive, before a paused client reads them,
// and so that a crash can close them all.
//
// The sockets reach the servers through a relay of ZooKeeper's jute
// (package relay, the one a lock program's connections pass), which runs
// each request through the client's failpoints (harness.Relay) in the
// worker's phase, pings and watch events beside them: go-zookeeper has no
// request hook, and a wrapper of its methods would miss the requests its
// recipe sends inside Lock and Unlock, and could not drop a reply the
// server sent. Through the relay a Go lock's create, children and delete
// are struck exactly as a program's are, a dropped reply included (the
// relay ends the connection once the client's timeout passed, and the
// session lives on through another).
func (Service) Dial(c *harness.Client, addrs []string) (harness.Handle, error) {
	rel, err := relay.Listen(c, addrs, relay.ZooKeeper)
	if err != nil {
		return nil, fmt.Errorf("zookeeper session: %w", err)
	}
	s := &session{c: c, relay: rel, socks: map[net.Conn]bool{}, born: time.Now()}
	timeout := c.Timeout()
	dial := func(network, addr string, _ time.Duration) (net.Conn, error) {
		// A stopped process dials nothing: a reconnection waits for the
		// pause to end.
		if err := c.Gate().WaitResumed(c.Context()); err != nil || c.Crashed() {
			return nil, harness.ErrNotSent
		}
		d := net.Dialer{Timeout: timeout}
		conn, err := d.DialContext(c.Context(), network, addr)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if c.Crashed() {
			conn.Close()
			return nil, harness.ErrNotSent
		}
		s.socks[conn] = true
		return socket.Pausable(sessionConn{Conn: conn, s: s}, c.Gate()), nil
	}
	conn, _, err := zk.Connect(rel.Addrs(), c.TTL(), zk.WithDialer(dial), zk.WithLogger(quiet{}), zk.WithLogInfo(false))
	if err != nil {
		rel.Close()
		return nil, fmt.Errorf("zookeeper session: %w", err)
	}
	s.conn = conn
	return s, nil
}

// Close ends the session: on a client's Close it tells the servers (which
// delete its ephemeral nodes at once); on a crash it closes the sockets
// first, so that nothing is said and the session expires on its own.
func (s *session) Close() error {
	if !s.c.Crashed() {
		s.conn.Close()
		s.relay.Close()
		return nil
	}
	s.mu.Lock()
	for conn := range s.socks {
		conn.Close()
	}
	s.mu.Unlock()
	s.relay.Drop()
	// zk.Conn.Close waits up to a second for a reply to its goodbye,
	// which a crashed client's closed sockets never send: the crash does
	// not wait for it, and the client's Close does.
	s.c.Go(func(context.Context) {
		s.conn.Close()
		s.relay.Close()
	})
	return nil
}

// sessionConn is a socket of a session, silent once the client has
// crashed; socket.Pausable stops it while the client is paused.
type sessionConn struct {
	net.Conn
	s *session
}

// Read notes when a server was last heard, as the bytes arrive: what a
// server sent shows the session alive then, whenever a paused client
// reads it.
func (z sessionConn) Read(b []byte) (int, error) {
	n, err := z.Conn.Read(b)
	if n > 0 {
		z.s.heard.Store(int64(time.Since(z.s.born)))
	}
	return n, err
}

// Write sends nothing once the client crashed.
func (z sessionConn) Write(b []byte) (int, error) {
	if z.s.c.Crashed() {
		return 0, harness.ErrNotSent
	}
	return z.Conn.Write(b)
}

// Close closes the socket and forgets it.
func (z sessionConn) Close() error {
	z.s.mu.Lock()
	delete(z.s.socks, z.Conn)
	z.s.mu.Unlock()
	return z.Conn.Close()
}

// quiet drops the ZooKeeper client's log: it logs every connection a
// fault breaks, and the lock gets the error all the same.
type quiet struct{}

func (quiet) Printf(string, ...any) {}

// Env gives a lock program LOCKLAB_ZOOKEEPER, each server's host:port
// through its client's links, and LOCKLAB_SESSION_MS, the session timeout
// the Go locks ask for: the client's TTL, which the servers' ticks allow
// (cluster/local: two ticks of 100 ms at least).
func (Service) Env(c *harness.Client, addrs []string) []string {
	return []string{"LOCKLAB_ZOOKEEPER=" + strings.Join(addrs, ","),
		"LOCKLAB_SESSION_MS=" + strconv.FormatInt(c.TTL().Milliseconds(), 10)}
}
