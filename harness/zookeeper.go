package harness

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/locklab/locklab/harness/socket"
)

// ZooKeeper is the client's session with the zookeeper topology's servers,
// each reached through its own link, or nil on the other topologies. Its
// session timeout is the client's TTL (the servers allow 200 ms to 60 s).
// Its connections stop while the client is paused, its heartbeats
// included, as a stopped process's do: a pause past the session timeout
// lets the session expire on the servers, and its ephemeral nodes go with
// it. A crash closes its sockets without ending the session, so the
// session expires on the servers as a crashed process's does.
func (c *Client) ZooKeeper() *zk.Conn {
	if c.zk == nil {
		return nil
	}
	return c.zk.conn
}

// ZooKeeperSilence is how long the client's session has heard nothing
// from any server, as the client sees it (a paused client hears nothing
// until it resumes): past the session timeout, the servers may have
// expired the session, and a holder must count its lock as lost. The
// servers answer a heartbeat every third of the timeout.
func (c *Client) ZooKeeperSilence() time.Duration {
	if c.zk == nil {
		return 0
	}
	return time.Since(c.zk.born) - time.Duration(c.zk.heard.Load())
}

// zkSession is a client's ZooKeeper session and the sockets it dialed,
// which a crash closes.
type zkSession struct {
	conn  *zk.Conn
	born  time.Time    // when it was opened, on the monotonic clock
	heard atomic.Int64 // when a server was last heard, in ns since born

	mu    sync.Mutex
	socks map[net.Conn]bool
}

// openZooKeeper starts the client's session with the servers at servers
// (this client's links to them); zk.Connect dials in the background and
// fails only on an empty list.
func (c *Client) openZooKeeper(servers []string, timeout time.Duration) *zkSession {
	s := &zkSession{socks: map[net.Conn]bool{}, born: time.Now()}
	dial := func(network, addr string, _ time.Duration) (net.Conn, error) {
		// A stopped process dials nothing: a reconnection waits for the
		// pause to end.
		if err := c.waitResumed(c.ctx); err != nil || c.crashed.Load() {
			return nil, ErrNotSent
		}
		d := net.Dialer{Timeout: timeout}
		conn, err := d.DialContext(c.ctx, network, addr)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if c.crashed.Load() {
			conn.Close()
			return nil, ErrNotSent
		}
		s.socks[conn] = true
		return socket.Pausable(zkConn{Conn: conn, s: s, c: c}, owner{c}), nil
	}
	conn, _, err := zk.Connect(servers, c.ttl, zk.WithDialer(dial), zk.WithLogger(quietZK{}), zk.WithLogInfo(false))
	if err != nil {
		c.spoilf("client %d: zookeeper session: %v", c.id, err)
		return nil
	}
	s.conn = conn
	return s
}

// closeZooKeeper ends the session: on Close it tells the servers (which
// delete its ephemeral nodes at once); on a crash it closes the sockets
// first, so that nothing is said and the session expires on its own.
func (c *Client) closeZooKeeper() {
	if !c.crashed.Load() {
		c.zk.conn.Close()
		return
	}
	c.zk.mu.Lock()
	for conn := range c.zk.socks {
		conn.Close()
	}
	c.zk.mu.Unlock()
	// zk.Conn.Close waits up to a second for a reply to its goodbye,
	// which a crashed client's closed sockets never send: the crash does
	// not wait for it, and Client.Close does.
	c.wg.Go(c.zk.conn.Close)
}

// zkConn is a socket of a ZooKeeper session, silent once the client has
// crashed; socket.Pausable stops it while the client is paused.
type zkConn struct {
	net.Conn
	s *zkSession
	c *Client
}

// Read notes when a server was last heard, as the bytes arrive: what a
// server sent shows the session alive then, whenever a paused client
// reads it.
func (z zkConn) Read(b []byte) (int, error) {
	n, err := z.Conn.Read(b)
	if n > 0 {
		z.s.heard.Store(int64(time.Since(z.s.born)))
	}
	return n, err
}

func (z zkConn) Write(b []byte) (int, error) {
	if z.c.crashed.Load() {
		return 0, ErrNotSent
	}
	return z.Conn.Write(b)
}

func (z zkConn) Close() error {
	z.s.mu.Lock()
	delete(z.s.socks, z.Conn)
	z.s.mu.Unlock()
	return z.Conn.Close()
}

// quietZK drops the ZooKeeper client's log: it logs every connection a
// fault breaks, and the lock gets the error all the same.
type quietZK struct{}

func (quietZK) Printf(string, ...any) {}
