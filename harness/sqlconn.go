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
	return c.statement(ctx, c.phaseOf(ctx), query, send, false, nil)
}

// StatementRows is Statement for a statement whose result tells how many
// rows it changed: send returns that count (negative: not told), which
// the request's record keeps (history.Op.Rows), so that a reader can tell
// a DELETE that freed a row from one that found none.
func (c *Client) StatementRows(ctx context.Context, query string, send func() (int64, error)) error {
	rows := int64(-1)
	return c.statement(ctx, c.phaseOf(ctx), query, func() error {
		n, err := send()
		rows = n
		return err
	}, false, &rows)
}

// EndTx sends a transaction's COMMIT or ROLLBACK (query) as Statement
// does, in the phase the worker is in now, not the one the transaction
// began in: a lock that holds a transaction from its acquire commits it in
// its release.
func (c *Client) EndTx(ctx context.Context, query string, send func() error) error {
	return c.statement(ctx, c.phase.Load(), query, send, false, nil)
}

// statement sends one statement of the lock in phase run pr, named by its
// first word, through the failpoints armed on the lock's commands; the
// client's own statements (the inventory's, a probe's), in no phase, are
// sent as they are. held says the client's crash and pause hold it
// (around), which a request needs and a statement's pausable socket does
// itself; the request's record times only the exchange, not that wait.
// rows, when not nil, is where send leaves the rows it changed.
func (c *Client) statement(ctx context.Context, pr *phaseRun, query string, send func() error, held bool, rows *int64) error {
	words := strings.Fields(query)
	if pr == nil || len(words) == 0 {
		if held {
			return c.around(ctx, send)
		}
		return send()
	}
	x := &exchange{h: c.history, rows: rows}
	name := strings.ToUpper(words[0])
	var sendErr error
	run := func() error {
		sendErr = send()
		return sendErr
	}
	exchange := x.wrap(run)
	if held {
		exchange = func() error { return c.around(ctx, x.wrap(run)) }
	}
	err := c.strike(ctx, pr, -1, name, []sentCommand{{args: words}}, x, exchange)
	c.recordRequest(pr, name, x, sendErr)
	return err
}
