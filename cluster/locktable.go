package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// LockTable is the table of the SQL topologies' locks, one row per lock
// held, named by the lock key. A lock uses what it needs of it: id, an
// AUTO_INCREMENT (a BIGSERIAL on PostgreSQL), serves as a fencing token;
// expires_at, in the server's clock, is the lease of a lock that has one
// (NULL: none). On PostgreSQL, locklab is a schema of the database
// postgres; on MariaDB, a database.
const LockTable = "locklab.locks"

// Dialect is what the lock table's SQL says differently on each server,
// so that one lock's code runs on both: the placeholders, the time "now
// plus a lease", and the error of a duplicate name. It is the
// database/sql driver's name (Database.Driver).
type Dialect string

// Dialects.
const (
	MySQL Dialect = "mysql" // MariaDB, with github.com/go-sql-driver/mysql
	Pgx   Dialect = "pgx"   // PostgreSQL, with github.com/jackc/pgx/v5/stdlib
)

// Query rewrites q, written with MySQL's ? placeholders, for d: on
// PostgreSQL each ? becomes $1, $2, ... in order. q must hold no ? of its
// own (in a string literal, say).
func (d Dialect) Query(q string) string {
	if d != Pgx || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Now is the server's current time, to the millisecond on MariaDB (the
// precision of its expires_at) and the microsecond on PostgreSQL.
func (d Dialect) Now() string {
	if d == Pgx {
		return "now()"
	}
	return "NOW(3)"
}

// NowPlus is the server's time plus a duration given as one placeholder
// (?), in microseconds.
func (d Dialect) NowPlus() string {
	if d == Pgx {
		// A float8 times an interval: the operator PostgreSQL finds for
		// an untyped parameter.
		return "now() + ? * INTERVAL '1 microsecond'"
	}
	return "NOW(3) + INTERVAL ? MICROSECOND"
}

// Duplicate reports whether err is the server's refusal of a row whose
// unique key another row holds: MariaDB's error 1062, PostgreSQL's
// SQLSTATE 23505 (unique_violation).
func (d Dialect) Duplicate(err error) bool {
	if me := (*mysql.MySQLError)(nil); errors.As(err, &me) {
		return me.Number == 1062
	}
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	return false
}

// ConnectionID is the query that asks the server the id of the connection
// it runs on.
func (d Dialect) ConnectionID() string {
	if d == Pgx {
		return "SELECT pg_backend_pid()"
	}
	return "SELECT CONNECTION_ID()"
}

// KillConnection is the statement that has the server end connection id,
// rolling back what it held, as an administrator does.
func (d Dialect) KillConnection(id int64) string {
	if d == Pgx {
		return fmt.Sprintf("SELECT pg_terminate_backend(%d)", id)
	}
	return fmt.Sprintf("KILL CONNECTION %d", id)
}

// setupLockTable creates the lock table on db's server.
func setupLockTable(ctx context.Context, db Database) error {
	qs := []string{
		"CREATE DATABASE IF NOT EXISTS locklab",
		"CREATE TABLE IF NOT EXISTS " + LockTable + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL UNIQUE, " +
			"owner VARCHAR(64) NOT NULL, expires_at DATETIME(3) NULL) ENGINE=InnoDB",
	}
	if Dialect(db.Driver()) == Pgx {
		qs = []string{
			"CREATE SCHEMA IF NOT EXISTS locklab",
			"CREATE TABLE IF NOT EXISTS " + LockTable + " (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE, " +
				"owner TEXT NOT NULL, expires_at TIMESTAMPTZ NULL)",
		}
	}
	for _, q := range qs {
		if _, err := db.Admin().ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: set up the lock table: %w", db.Driver(), err)
		}
	}
	return nil
}

// LockState reads the state of the lock named key where the topology keeps
// it.
func (c *Cluster) LockState(ctx context.Context, key string) (State, error) {
	if c.lockDB != nil {
		d := Dialect(c.lockDB.Driver())
		left := "TIMESTAMPDIFF(MICROSECOND, NOW(3), expires_at)"
		if d == Pgx {
			left = "CAST(EXTRACT(EPOCH FROM expires_at - now()) * 1000000 AS BIGINT)"
		}
		micros, err := c.lockRow(ctx, d.Query("SELECT "+left+" FROM "+LockTable+" WHERE name = ?"), key)
		switch {
		case errors.Is(err, sql.ErrNoRows) && d == Pgx:
			return c.advisoryState(ctx, key)
		case errors.Is(err, sql.ErrNoRows):
			return c.namedLockState(ctx, key)
		case err != nil:
			return Free, fmt.Errorf("read the lock row: %w", err)
		case !micros.Valid:
			return Unexpiring(), nil
		}
		// An expired row not yet deleted is no lock.
		return Until(time.Duration(micros.Int64) * time.Microsecond), nil
	}
	if c.deployment != nil {
		return c.deployment.LockState(ctx, key)
	}
	return Free, fmt.Errorf("cluster: topology %s has no lock state to read", c.topology)
}

// lockRow reads the lock row of key with query, uncommitted: the row a
// FOR UPDATE lock's first acquire inserts is its holder's until it
// commits, and a holder that never commits still holds the lock.
func (c *Cluster) lockRow(ctx context.Context, query, key string) (sql.NullInt64, error) {
	var micros sql.NullInt64
	tx, err := c.lockDB.Admin().BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadUncommitted, ReadOnly: true})
	if err != nil {
		return micros, err
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx, query, key).Scan(&micros)
	return micros, err
}

// SQLDialect is the dialect of the lock table's server, or "" on a
// topology without one.
func (c *Cluster) SQLDialect() Dialect {
	if c.lockDB == nil {
		return ""
	}
	return Dialect(c.lockDB.Driver())
}

// namedLockState is LockState of a MariaDB named lock (GET_LOCK(key), as
// the locks of pitfalls d4 and d5 take it), which has no row: held with no
// expiry while a connection holds it, for as long as it lives.
func (c *Cluster) namedLockState(ctx context.Context, key string) (State, error) {
	var holder sql.NullInt64
	if err := c.lockDB.Admin().QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", key).Scan(&holder); err != nil {
		return Free, fmt.Errorf("read the named lock: %w", err)
	}
	if holder.Valid {
		return Unexpiring(), nil
	}
	return Free, nil
}

// advisoryState is LockState of a PostgreSQL advisory lock on key's hash
// (pg_advisory_lock(hashtext(key)), as the advisory locks of pitfall p1
// take it), which has no row: held with no expiry while a session holds
// it. pg_locks shows a bigint key as its two halves.
func (c *Cluster) advisoryState(ctx context.Context, key string) (State, error) {
	var held bool
	err := c.lockDB.Admin().QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted "+
		"AND ((classid::bigint << 32) | objid::bigint) = hashtext($1)::bigint)", key).Scan(&held)
	if err != nil {
		return Free, fmt.Errorf("read the advisory locks: %w", err)
	}
	if held {
		return Unexpiring(), nil
	}
	return Free, nil
}

// ConnectionsFrom is the query that lists the ids of the server's
// connections from local TCP port port of this machine: those a link made
// for its client (network.Link.UpstreamPorts).
func (d Dialect) ConnectionsFrom(port int) string {
	if d == Pgx {
		return fmt.Sprintf("SELECT pid FROM pg_stat_activity WHERE client_port = %d", port)
	}
	return fmt.Sprintf("SELECT ID FROM information_schema.PROCESSLIST WHERE HOST LIKE '%%:%d'", port)
}
