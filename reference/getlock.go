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

// GetLock is MariaDB's named lock, GET_LOCK(name, timeout): the server
// grants it to one connection, makes others wait in GET_LOCK up to a
// timeout (half the client's), and frees it on RELEASE_LOCK from that same
// connection or when the connection ends. Nothing is stored, so nothing
// expires: a crashed holder's lock goes with its connection, a paused
// holder's stays. Three ways to hold it:
//
//   - on the pool (GetLock{Pooled: true}, package broken's get-lock-pool): GET_LOCK and RELEASE_LOCK each run on
//     whichever connection the pool hands out, so the release may run on
//     another connection, which does not hold the lock: RELEASE_LOCK
//     returns 0, and the lock stays with a connection idle in the pool;
//   - on a connection pinned for the hold (NewGetLock), which is the lock
//     as MariaDB means it, but a holder whose connection the server
//     closes while it works has lost it unaware;
//   - pinned, with a transaction on that connection that the lease hands
//     the runner (NewGetLockTx, a harness.TxLease): the protected write,
//     made in it and committed before RELEASE_LOCK, dies with the lock.
type GetLock struct {
	// Pooled runs GET_LOCK and RELEASE_LOCK each on whichever connection
	// the client's pool hands out, rather than on one pinned for the hold
	// (package broken's get-lock-pool).
	Pooled bool

	c      *harness.Client
	pinned bool
	tx     bool
}

// For builds the lock of client c, pinned unless l says Pooled:
// GetLock{...}.For is a harness.NewLocker.
func (l GetLock) For(c *harness.Client) harness.Locker { return &GetLock{c: c, pinned: !l.Pooled} }

// NewGetLock is GET_LOCK on one connection pinned from acquire to release.
func NewGetLock(c *harness.Client) harness.Locker { return &GetLock{c: c, pinned: true} }

// NewGetLockTx is NewGetLock whose lease carries a transaction on the
// pinned connection, committed before the release (harness.TxLease).
func NewGetLockTx(c *harness.Client) harness.Locker {
	return &GetLock{c: c, pinned: true, tx: true}
}

// querier is what a pool and a pinned connection share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (l *GetLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	h := sqldb.Of(l.c)
	if h == nil {
		return nil, errors.New("get-lock: no SQL server (the lock runs on topology " + string(cluster.MariaDBTopology) + ")")
	}
	db := h.DB()
	lease := &GetLockLease{db: db, key: key}
	var on querier = db
	if l.pinned {
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("pin a connection: %w", err)
		}
		lease.conn, on = conn, conn
	}
	// Half the client's timeout: the server's "no" comes before the
	// driver's read timeout would make the outcome unknown.
	if err := getLock(ctx, on, key, l.c.Timeout().Seconds()/2); err != nil {
		lease.unpin()
		return nil, err
	}
	if !l.tx {
		return lease, nil
	}
	// The transaction lives as long as the hold, not as the acquire's
	// context: Release ends it.
	tx, err := lease.conn.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		// The lock is ours but the client cannot tell whether its
		// connection still holds it: give it back as the lock would.
		lease.Release(ctx)
		return nil, fmt.Errorf("begin: %w", err)
	}
	return &GetLockTxLease{GetLockLease: lease, tx: tx}, nil
}

// getLock runs GET_LOCK on q: 1 is the lock, 0 a wait that timed out.
func getLock(ctx context.Context, q querier, key string, timeout float64) error {
	var got sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", key, timeout).Scan(&got); err != nil {
		return fmt.Errorf("get_lock: %w", err)
	}
	switch {
	case !got.Valid:
		return fmt.Errorf("get_lock %s: NULL (an error in the server)", key)
	case got.Int64 != 1:
		return fmt.Errorf("%s: %w (GET_LOCK timed out)", key, harness.ErrNotAcquired)
	}
	return nil
}

// GetLockLease is a lease of a GetLock.
type GetLockLease struct {
	db   *sql.DB
	conn *sql.Conn // the pinned connection; nil on the pool
	key  string
}

// Token is 0: GET_LOCK has no fencing token.
func (l *GetLockLease) Token() uint64 { return 0 }

// Release runs RELEASE_LOCK where the lock was taken: on the pinned
// connection, or on the pool. RELEASE_LOCK returns 1 when this connection
// held the lock, 0 when another does, NULL when nobody does: either is a
// lock no longer ours here.
func (l *GetLockLease) Release(ctx context.Context) error {
	defer l.unpin()
	var on querier = l.db
	if l.conn != nil {
		on = l.conn
	}
	var released sql.NullInt64
	if err := on.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", l.key).Scan(&released); err != nil {
		return fmt.Errorf("release_lock: %w", err)
	}
	if !released.Valid || released.Int64 != 1 {
		return fmt.Errorf("%s: %w (RELEASE_LOCK returned %v on this connection)", l.key, harness.ErrNotHeld, nullString(released))
	}
	return nil
}

// unpin gives a pinned connection back to the pool.
func (l *GetLockLease) unpin() {
	if l.conn != nil {
		l.conn.Close()
	}
}

// nullString shows a NULL as SQL does.
func nullString(n sql.NullInt64) string {
	if !n.Valid {
		return "NULL"
	}
	return fmt.Sprint(n.Int64)
}

// GetLockTxLease is a GetLockLease with a transaction on its pinned
// connection, committed before RELEASE_LOCK (harness.TxLease).
type GetLockTxLease struct {
	*GetLockLease
	tx *sql.Tx
}

// Tx is the transaction on the connection that holds the lock.
func (l *GetLockTxLease) Tx() *sql.Tx { return l.tx }

// Release commits the transaction, then releases the lock: commit, then
// unlock (pitfall 8). A commit that fails leaves its outcome unknown; the
// lock is released all the same.
func (l *GetLockTxLease) Release(ctx context.Context) error {
	if err := l.tx.Commit(); err != nil {
		l.GetLockLease.Release(ctx)
		return fmt.Errorf("%s: commit: %w", l.key, err)
	}
	return l.GetLockLease.Release(ctx)
}
