package harness

import (
	"context"
	"database/sql/driver"
	"strings"

	"github.com/locklab/locklab/cluster"
)

// The lock's SQL statements pass the same failpoints as its Redis commands:
// a crash before or after its k-th statement of a phase, a pause, a delay,
// a lost reply. database/sql has no hook, so the client's connector wraps
// each connection it makes, and a statement the lock sends in a phase (the
// workload's context carries it) goes through strike as a command does.
// The harness cannot read from an SQL statement whether it took the lock,
// as it reads a Redis command's reply, so failpoint.AfterTook never strikes on SQL.

// sqlConnector makes the client's SQL connections: it records each one's
// server-side id (for kill-connection) and wraps it.
type sqlConnector struct {
	driver.Connector
	c       *Client
	dialect cluster.Dialect // says how to ask the server a connection's id
}

func (s sqlConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := s.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.c.sqlConns.recordID(ctx, conn, s.dialect.ConnectionID()); err != nil {
		conn.Close()
		return nil, err
	}
	return &sqlConn{Conn: conn, c: s.c}, nil
}

// sqlConn is one connection of the client's pool. It passes everything to
// the driver's connection, and its statements and transactions through
// the client's failpoints. A driver without the context methods gets the
// database/sql fallbacks, unstruck.
type sqlConn struct {
	driver.Conn
	c *Client
}

// statement sends one statement of the lock, named by its first word,
// through the failpoints armed on the lock's commands, when the lock sends
// it in a phase; the client's own statements (the inventory's, a probe's)
// are sent as they are.
func (c *Client) statement(ctx context.Context, query string, send func() error) error {
	return c.statementIn(ctx, c.phaseOf(ctx), query, send)
}

// statementIn is statement in phase run pr.
func (c *Client) statementIn(ctx context.Context, pr *phaseRun, query string, send func() error) error {
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

func (s *sqlConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ex, ok := s.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	var res driver.Result
	err := s.c.statement(ctx, query, func() (err error) {
		res, err = ex.ExecContext(ctx, query, args)
		return err
	})
	return res, err
}

func (s *sqlConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	var rows driver.Rows
	err := s.c.statement(ctx, query, func() (err error) {
		rows, err = q.QueryContext(ctx, query, args)
		return err
	})
	if err != nil && rows != nil {
		rows.Close() // a reply the failpoint dropped, or a crash after it came
		rows = nil
	}
	return rows, err
}

func (s *sqlConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := s.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return s.Conn.Prepare(query)
}

// BeginTx begins a transaction whose COMMIT and ROLLBACK are statements of
// the phase it began in.
func (s *sqlConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	var tx driver.Tx
	var err error
	if b, ok := s.Conn.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		tx, err = s.Conn.Begin() //lint:ignore SA1019 the driver has nothing else
	}
	if err != nil {
		return nil, err
	}
	return &sqlTx{Tx: tx, ctx: ctx, c: s.c}, nil
}

func (s *sqlConn) Ping(ctx context.Context) error {
	if p, ok := s.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (s *sqlConn) ResetSession(ctx context.Context) error {
	if r, ok := s.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (s *sqlConn) IsValid() bool {
	if v, ok := s.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (s *sqlConn) CheckNamedValue(nv *driver.NamedValue) error {
	if c, ok := s.Conn.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// sqlTx is a transaction of a wrapped connection; ctx is the one it began
// with, which database/sql also ends it by.
type sqlTx struct {
	driver.Tx
	ctx context.Context
	c   *Client
}

// Commit and Rollback count in the phase the worker is in when they are
// sent, not the one the transaction began in: a lock that holds a
// transaction from its acquire commits it in its release.
func (t *sqlTx) Commit() error {
	return t.c.statementIn(t.ctx, t.c.phase.Load(), "COMMIT", t.Tx.Commit)
}

func (t *sqlTx) Rollback() error {
	return t.c.statementIn(t.ctx, t.c.phase.Load(), "ROLLBACK", t.Tx.Rollback)
}
