package harness

import (
	"context"
	"database/sql"
	"strings"
)

// The harness cannot read from an SQL statement whether it took the lock,
// as it reads a Redis command's reply, so AfterTook never strikes on SQL.

// Pooled is a Handle that is a database/sql pool on the lock's server (the
// SQL services', service/sqldb): what a HoldConn failpoint takes a
// connection of, and whose connections kill-connection ends.
type Pooled interface {
	Handle
	// DB is the pool.
	DB() *sql.DB
	// ConnectionIDs are the server-side ids of every connection the pool
	// opened, in order; some may have closed since.
	ConnectionIDs() []int64
}

// SQLConnections are the server-side ids (CONNECTION_ID(),
// pg_backend_pid()) of every connection the client's SQL pool opened, in
// order; some may have closed since. Nil but on the SQL topologies.
func (c *Client) SQLConnections() []int64 {
	if p, ok := c.handle.(Pooled); ok {
		return p.ConnectionIDs()
	}
	return nil
}

// owner is the client as its sockets see it (socket.Gate).
type owner struct{ c *Client }

func (o owner) WaitResumed(ctx context.Context) error { return o.c.waitResumed(ctx) }

// Statement sends one SQL statement of the lock, query, by calling send,
// in the phase ctx carries, through the failpoints armed on the lock's
// commands, named by its first word; one sent in no phase (the client's
// own) is sent as it is. A service's pool wraps each of its connections'
// statements in it (service/sqldb).
func (c *Client) Statement(ctx context.Context, query string, send func() error) error {
	return c.statement(ctx, c.phaseOf(ctx), query, send)
}

// EndTx sends a transaction's COMMIT or ROLLBACK (query) as Statement
// does, in the phase the worker is in now, not the one the transaction
// began in: a lock that holds a transaction from its acquire commits it in
// its release.
func (c *Client) EndTx(ctx context.Context, query string, send func() error) error {
	return c.statement(ctx, c.phase.Load(), query, send)
}

// statement sends one statement of the lock in phase run pr, named by its
// first word, through the failpoints armed on the lock's commands; the
// client's own statements (the inventory's, a probe's), in no phase, are
// sent as they are.
func (c *Client) statement(ctx context.Context, pr *phaseRun, query string, send func() error) error {
	if pr == nil {
		return send()
	}
	words := strings.Fields(query)
	if len(words) == 0 {
		return send()
	}
	x := &exchange{h: c.history}
	return c.strike(ctx, pr, -1, strings.ToUpper(words[0]), []sentCommand{{args: words}}, x, x.wrap(send))
}
