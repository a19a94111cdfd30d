package reference

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/service/sqldb"
)

// ForUpdateLock is seed 001's second database lock, on the SQL topology:
// the lock is the exclusive row lock of SELECT … FOR UPDATE on the key's
// row of sqldb.LockTable, held by a transaction left open on one
// connection pinned for the hold; COMMIT releases it. A waiter waits in
// the server, up to innodb_lock_wait_timeout (the client's timeout,
// rounded up to whole seconds, which is how MariaDB counts it) or until
// its context ends (the driver's read timeout is the client's timeout too:
// a wait that reaches it ends as an unknown outcome, which the worker
// retries like a refusal). The server rolls the transaction back when the
// connection ends, so a crashed holder frees the lock at once, and a
// paused one keeps it: nothing expires. But a holder whose connection the
// server closes while it works (a KILL, a wait_timeout, a proxy's idle
// timeout) has lost the lock and does not know it until it next speaks.
// With a transaction (NewForUpdateLockTx) its lease hands the runner the
// transaction (harness.TxLease), and the protected write made in it dies
// with the lock. With NOWAIT (NewForUpdateLockNoWait) a waiter is refused
// at once and gives its connection back before it tries again.
type ForUpdateLock struct {
	c      *harness.Client
	tx     bool
	nowait bool
}

// NewForUpdateLock is the FOR UPDATE lock whose holder writes the
// resource on its own connection, outside the lock's transaction.
func NewForUpdateLock(c *harness.Client) harness.Locker { return &ForUpdateLock{c: c} }

// NewForUpdateLockTx is the FOR UPDATE lock whose lease carries its
// transaction (harness.TxLease): the protected write is made in it and
// committed with the release, so a holder that lost its connection writes
// nothing.
func NewForUpdateLockTx(c *harness.Client) harness.Locker { return &ForUpdateLock{c: c, tx: true} }

// NewForUpdateLockNoWait is the FOR UPDATE lock that never waits in the
// server: SELECT … FOR UPDATE NOWAIT refuses a held row at once, and the
// acquire gives its connection back to the pool, so that a waiter holds
// no connection between its tries (the workload's retry delay).
func NewForUpdateLockNoWait(c *harness.Client) harness.Locker {
	return &ForUpdateLock{c: c, nowait: true}
}

// MariaDB's errors that mean the lock was not taken, the transaction
// rolled back: a lock wait timed out, or two first acquires that both
// created the row deadlocked.
const (
	errLockWaitTimeout = 1205
	errDeadlock        = 1213
)

func (l *ForUpdateLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	h := sqldb.Of(l.c)
	if h == nil {
		return nil, errors.New("for-update lock: no SQL server (the lock runs on topology " + string(cluster.MariaDBTopology) + ")")
	}
	db := h.DB()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("pin a connection: %w", err)
	}
	lease, err := l.lock(ctx, conn, key)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if l.tx {
		return &ForUpdateTxLease{ForUpdateLease: lease}, nil
	}
	return lease, nil
}

// lock takes the row lock on conn.
func (l *ForUpdateLock) lock(ctx context.Context, conn *sql.Conn, key string) (*ForUpdateLease, error) {
	wait := int64(math.Ceil(l.c.Timeout().Seconds()))
	if _, err := conn.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = ?", max(wait, 1)); err != nil {
		return nil, fmt.Errorf("set the lock wait timeout: %w", err)
	}
	// The transaction lives as long as the hold, not as the acquire's
	// context: Release ends it, and a crash closes its connection.
	tx, err := conn.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	lease := &ForUpdateLease{conn: conn, tx: tx, key: key}
	err = l.forUpdate(ctx, tx, key)
	if errors.Is(err, sql.ErrNoRows) {
		// The first acquire of the key makes its row; INSERT IGNORE waits
		// for whoever else inserted it meanwhile.
		if _, err = tx.ExecContext(ctx, "INSERT IGNORE INTO "+sqldb.LockTable+" (name, owner) VALUES (?, '')", key); err == nil {
			err = l.forUpdate(ctx, tx, key)
		}
	}
	if err != nil {
		tx.Rollback()
		if n, ok := sqldb.ErrorNumber(err); ok && (n == errLockWaitTimeout || n == errDeadlock) {
			return nil, fmt.Errorf("%s: %w (%v)", key, harness.ErrNotAcquired, err)
		}
		return nil, err
	}
	return lease, nil
}

// forUpdate locks the key's row, waiting for its holder unless nowait;
// NOWAIT fails as a lock wait timeout does.
func (l *ForUpdateLock) forUpdate(ctx context.Context, tx *sql.Tx, key string) error {
	query := "SELECT id FROM " + sqldb.LockTable + " WHERE name = ? FOR UPDATE"
	if l.nowait {
		query += " NOWAIT"
	}
	var id int64
	return tx.QueryRowContext(ctx, query, key).Scan(&id)
}

// ForUpdateLease is a lease of a ForUpdateLock: the open transaction that
// holds the row lock, on its pinned connection.
type ForUpdateLease struct {
	conn *sql.Conn
	tx   *sql.Tx
	key  string
}

// Token is 0: the row lock has no fencing token.
func (l *ForUpdateLease) Token() uint64 { return 0 }

// Release commits the transaction, which frees the row lock, and gives
// the connection back to the pool. A commit that fails has an unknown
// outcome for the writes in it; the lock is free either way, since the
// server rolls back a transaction whose connection is gone.
func (l *ForUpdateLease) Release(ctx context.Context) error {
	defer l.conn.Close()
	if err := l.tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", l.key, err)
	}
	return nil
}

// ForUpdateTxLease is a ForUpdateLease that hands its transaction to the
// critical section (harness.TxLease).
type ForUpdateTxLease struct{ *ForUpdateLease }

// Tx is the transaction that holds the row lock.
func (l *ForUpdateTxLease) Tx() *sql.Tx { return l.tx }
