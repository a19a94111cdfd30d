package reference

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/service/sqldb"
)

// AdvisoryLock is seed 001's PostgreSQL advisory lock: pg_try_advisory_lock
// on the key's hash takes it, pg_advisory_unlock gives it back. Such a lock
// belongs to the session, the one connection, that took it; the server
// frees it when that session ends, and only that session can unlock it.
//
// Pooled (pitfall advisory-pool), both run on the client's pool (database/sql), each
// on whichever connection the pool hands out: when the connection that
// took the lock is busy with something else of the process at the release,
// the unlock runs on another session, returns false, and the lock stays
// held by a connection idling in the pool. Pinned (its fix), the lease
// keeps the connection it took the lock on (DB.Conn) and unlocks there.
type AdvisoryLock struct {
	// Pooled takes and releases the lock each on whichever connection the
	// pool hands out (package broken's advisory-pool).
	Pooled bool

	c      *harness.Client
	pinned bool
}

// NewAdvisoryPinned is the advisory lock held on one connection taken
// from the pool for the hold: the fix of pitfall advisory-pool.
func NewAdvisoryPinned(c *harness.Client) harness.Locker { return AdvisoryLock{}.For(c) }

// For builds the lock of client c, pinned unless l says Pooled:
// AdvisoryLock{...}.For is a harness.NewLocker.
func (l AdvisoryLock) For(c *harness.Client) harness.Locker {
	return &AdvisoryLock{c: c, pinned: !l.Pooled}
}

// The lock's statements; hashtext makes the integer key an advisory lock
// takes out of the lock's name.
const (
	AdvisoryLockSQL   = "SELECT pg_try_advisory_lock(hashtext($1))"
	advisoryUnlockSQL = "SELECT pg_advisory_unlock(hashtext($1))"
)

func (l *AdvisoryLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	h := sqldb.Of(l.c)
	if h == nil || h.Dialect() != sqldb.Pgx {
		return nil, errors.New("advisory lock: no PostgreSQL server (the lock runs on topology " + string(cluster.PostgresTopology) + ")")
	}
	db := h.DB()
	if !l.pinned {
		if err := tryAdvisory(ctx, db, key); err != nil {
			return nil, err
		}
		return &advisoryLease{on: db, key: key}, nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if err := tryAdvisory(ctx, conn, key); err != nil {
		if errors.Is(err, harness.ErrNotAcquired) {
			conn.Close()
		} else {
			discard(conn) // the lock may be held on it: end its session
		}
		return nil, err
	}
	return &advisoryLease{on: conn, conn: conn, key: key}, nil
}

// tryAdvisory takes the advisory lock of key on q's session, or says who
// holds it.
func tryAdvisory(ctx context.Context, q querier, key string) error {
	var ok bool
	if err := q.QueryRowContext(ctx, AdvisoryLockSQL, key).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
	}
	return nil
}

// discard closes conn for good rather than giving it back to the pool, so
// that the server ends its session and every advisory lock it holds: what
// a connection whose lock state is unknown must get.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	conn.Close()
}

// advisoryLease is a hold of an AdvisoryLock: on the pool, or on conn when
// pinned.
type advisoryLease struct {
	on   querier
	conn *sql.Conn // the pinned connection, or nil
	key  string
}

// Release unlocks on the lease's session, or, unpinned, on whichever the
// pool hands out; false from the server means that session held no such
// lock.
func (l *advisoryLease) Release(ctx context.Context) error {
	var ok bool
	err := l.on.QueryRowContext(ctx, advisoryUnlockSQL, l.key).Scan(&ok)
	if l.conn != nil {
		if err != nil {
			discard(l.conn)
		} else {
			l.conn.Close()
		}
	}
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: pg_advisory_unlock on another session: %w", l.key, harness.ErrNotHeld)
	}
	return nil
}

// Token is 0: an advisory lock hands out no fencing token.
func (*advisoryLease) Token() uint64 { return 0 }
