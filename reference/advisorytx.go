package reference

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/service/sqldb"
)

// AdvisoryTx is PostgreSQL's transaction-level advisory lock, the fix of
// pitfall p2: BEGIN, then pg_advisory_xact_lock on the key's hash, on the
// one connection the transaction pins. The transaction holds the lock, and
// COMMIT (the release) frees it; there is no unlock. Its lease is a
// harness.TxLease: the protected write, made in the same transaction,
// lives or dies with the lock. When the server ends the session while the
// holder works, the lock goes to another client, as a session lock does,
// but the holder's write goes with it: its UPDATE or its COMMIT fails.
type AdvisoryTx struct{ c *harness.Client }

// NewAdvisoryTx builds a transaction-level advisory lock for c.
func NewAdvisoryTx(c *harness.Client) harness.Locker { return &AdvisoryTx{c: c} }

// The lock's statement; hashtext makes the integer key an advisory lock
// takes out of the lock's name, as the session locks of pitfalls p1 and p2
// do, so that the same key is one lock for both.
const advisoryXactLockSQL = "SELECT pg_advisory_xact_lock(hashtext($1))"

// lockNotAvailable is PostgreSQL's SQLSTATE for a lock wait that ran past
// lock_timeout.
const lockNotAvailable = "55P03"

// Acquire begins the transaction and waits in the server for the lock.
func (l *AdvisoryTx) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	h := sqldb.Of(l.c)
	if h == nil || h.Dialect() != sqldb.Pgx {
		return nil, errors.New("advisory-tx: no PostgreSQL server (the lock runs on topology " + string(cluster.PostgresTopology) + ")")
	}
	db := h.DB()
	// The transaction lives as long as the hold, not as the acquire's
	// context: Release ends it.
	tx, err := db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	// Waiters wait in the server, up to half the client's timeout: the
	// server's "no" comes before the driver's read timeout would make
	// the outcome unknown.
	wait := fmt.Sprintf("SET LOCAL lock_timeout = %d", max(l.c.Timeout().Milliseconds()/2, 1))
	if _, err := tx.ExecContext(ctx, wait); err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("set lock_timeout: %w", err)
	}
	if _, err := tx.ExecContext(ctx, advisoryXactLockSQL, key); err != nil {
		// A rollback frees the lock if the statement took it after all;
		// on a connection that failed, the session's end frees it.
		tx.Rollback()
		if code, ok := sqldb.SQLState(err); ok && code == lockNotAvailable {
			return nil, fmt.Errorf("%s: %w (lock_timeout)", key, harness.ErrNotAcquired)
		}
		return nil, fmt.Errorf("pg_advisory_xact_lock: %w", err)
	}
	return &AdvisoryTxLease{tx: tx, key: key}, nil
}

// AdvisoryTxLease is a hold of an AdvisoryTx: its open transaction
// (harness.TxLease).
type AdvisoryTxLease struct {
	tx  *sql.Tx
	key string
}

// Tx is the transaction that holds the lock.
func (l *AdvisoryTxLease) Tx() *sql.Tx { return l.tx }

// Token is 0: an advisory lock hands out no fencing token.
func (*AdvisoryTxLease) Token() uint64 { return 0 }

// Release commits the transaction, which frees the lock. A commit that
// fails leaves the write's outcome unknown to the client; the transaction
// is over either way, and its lock with it (a connection that failed
// ends its session).
func (l *AdvisoryTxLease) Release(ctx context.Context) error {
	if err := l.tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", l.key, err)
	}
	return nil
}
