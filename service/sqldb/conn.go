package sqldb

import (
	"context"
	"database/sql/driver"
)

// The lock's SQL statements pass the same failpoints as its Redis commands:
// a crash before or after its k-th statement of a phase, a pause, a delay,
// a lost reply. database/sql has no hook, so the pool's connector wraps
// each connection it makes, and a statement goes through harness.Client.Statement.

// connector makes the pool's connections: it records each one's
// server-side id (for kill-connection) and wraps it.
type connector struct {
	driver.Connector
	pool *pool
	u    user
}

func (s connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := s.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.pool.recordID(ctx, conn); err != nil {
		conn.Close()
		return nil, err
	}
	return &sqlConn{Conn: conn, c: s.u}, nil
}

// sqlConn is one connection of the client's pool. It passes everything to
// the driver's connection, and its statements and transactions through
// the client's failpoints. A driver without the context methods gets the
// database/sql fallbacks, unstruck.
type sqlConn struct {
	driver.Conn
	c user
}

func (s *sqlConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ex, ok := s.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	var res driver.Result
	err := s.c.StatementRows(ctx, query, func() (int64, error) {
		var err error
		if res, err = ex.ExecContext(ctx, query, args); err != nil {
			return -1, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return -1, nil // the driver does not tell: the statement stands
		}
		return n, nil
	})
	return res, err
}

func (s *sqlConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	var rows driver.Rows
	err := s.c.Statement(ctx, query, func() (err error) {
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
	c   user
}

func (t *sqlTx) Commit() error { return t.c.EndTx(t.ctx, "COMMIT", t.Tx.Commit) }

func (t *sqlTx) Rollback() error { return t.c.EndTx(t.ctx, "ROLLBACK", t.Tx.Rollback) }
