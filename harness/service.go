package harness

import (
	"context"
	"net"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness/socket"
)

// Handle is what a lock service started through the seam
// (cluster.LockService) hands each client to reach its servers: its client
// library's connection, dialled through the client's own links. The
// client closes it when it crashes or ends.
type Handle interface {
	Close() error
}

// Dialer is how a lock service's own package dials a client's Handle. It
// is the client-side half of the seam whose server-side half is
// cluster.LockService.
type Dialer interface {
	// Dial opens c's handle to the servers at addrs: the client's links
	// to the deployment's lock nodes, in the order of its Nodes. Its
	// sockets come from c.DialContext and its requests pass c.Request.
	Dial(c *Client, addrs []string) (Handle, error)
	// Env is the environment a lock program on this service is given to
	// reach the servers at addrs: one variable, LOCKLAB_ and the
	// service's name, and whatever the service's locks need beside it.
	Env(c *Client, addrs []string) []string
}

// Sharer is a service's shared pool (ClientOptions.Pool) that gives each
// client a handle of its own on the pool's connections (Redis's,
// memcached's), so that the client's commands still pass its failpoints
// and are recorded as its own; a shared pool that is no Sharer (the SQL
// services') is every client's handle itself. The client closes neither:
// the pool's owner closes the pool once every client is closed.
type Sharer interface {
	Handle
	// Share is c's handle on the pool.
	Share(c *Client) Handle
}

// Bound is a Dialer that dials the deployment it is bound to, which its
// clients' addresses alone do not name (the SQL services': the server's
// user and database): a client binds it to its cluster's deployment before
// it dials.
type Bound interface {
	// Bind is the Dialer of d's clients.
	Bind(d cluster.Deployment) Dialer
}

// Endpointed is a Dialer that gives a lock program its Endpoints itself,
// rather than as Env: the SQL services', whose programs take the server's
// URL (Endpoints.MySQL, Endpoints.Postgres), which package program's relay
// rewrites.
type Endpointed interface {
	// Endpoints are what a lock program of c reaches the servers at addrs
	// by.
	Endpoints(c *Client, addrs []string) Endpoints
}

// ReplyNoder is a Handle that tells which lock node a command sent on its
// connection to node reached, for the history's replies (Redis's: on
// replicated, the data node its Sentinel failover client last dialled),
// and false when the history should record none.
type ReplyNoder interface {
	ReplyNode(node int) (int, bool)
}

// KeyReader reads the lock key on a lock node past the client's links and
// hooks, on locklab's own connections: how an opaque command (a script) is
// told to have taken the key (keyWatch).
type KeyReader interface {
	// ReadKey is key's serialized value on node (its index in the lock's
	// nodes), or exists false when there is none; an error when it
	// could not be read.
	ReadKey(ctx context.Context, node int, key string) (value string, exists bool, err error)
	// Close closes the connections, when the client ends.
	Close() error
}

// Prober is a Dialer that gives each client a KeyReader of its own.
type Prober interface {
	Probe(c *Client) KeyReader
}

// Handle is the client's handle to a lock service started through the
// seam, or nil on the other services; the service's package reads it as
// its own type (memcached.Of).
func (c *Client) Handle() Handle { return c.handle }

// Context ends when the client crashes or ends, or its run does: what a
// handle that works in the background (etcd's lease keep-alives) lives on.
func (c *Client) Context() context.Context { return c.ctx }

// Gate is the client as the gate of its sockets: a handle that dials its
// own sockets, rather than through DialContext (ZooKeeper's, which notes
// when a server was heard as the bytes arrive), wraps them in
// socket.Pausable with it, and waits on it before it dials.
func (c *Client) Gate() socket.Gate { return owner{c} }

// DialContext dials a socket of this client, as a process's: refused once
// the client crashed, and stopped while it is paused (nothing is sent, a
// reply is read once it resumes). A service's Dialer builds its handle on
// it, so that a crash closes the handle and a pause stops it.
func (c *Client) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if err := c.waitResumed(ctx); err != nil || c.crashed.Load() {
		return nil, ErrNotSent
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return socket.Pausable(conn, owner{c}), nil
}

// Request sends one request of the lock, called name ("ADD", "CAS"), by
// calling send, through the failpoints armed on the lock's commands in
// its phase, as a statement on SQL or an etcd request is: a crash before
// or after it, a pause, a delay, a lost reply. It also honours the
// client's crash and pause. The harness cannot tell from a request
// whether it took the lock, so AfterTook never strikes here.
//
// The failpoints come first, as they do on a Redis command: a crash
// before the request leaves it not sent (ErrNotSent), which the lock can
// tell from a crash while it was under way (ErrCrashed).
func (c *Client) Request(ctx context.Context, name string, send func() error) error {
	return c.statement(ctx, c.phaseOf(ctx), name, send, true, nil)
}
