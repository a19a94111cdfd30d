package reference

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// UniqueRowLock is seed 001's first database lock, on the SQL topology: a
// row of cluster.LockTable with a unique name, INSERTed to acquire and
// DELETEd (by its owner) to release. With a lease, the row carries an
// expiry in the server's clock, and an acquire first deletes the row of a
// lease run out, the seed's cleanup job; with a watchdog, the holder
// extends its lease every TTL/3 while it holds the lock. Fenced, the row's
// AUTO_INCREMENT id is the lease's fencing token, which the resource checks.
type UniqueRowLock struct {
	c        *harness.Client
	lease    bool
	watchdog bool
	fenced   bool
	n        int
}

// NewUniqueRowLock is the unique-row lock with a lease of the client's TTL
// and a watchdog: the reference lock of the SQL topology.
func NewUniqueRowLock(c *harness.Client) harness.Locker {
	return &UniqueRowLock{c: c, lease: true, watchdog: true}
}

// NewUniqueRowLockNoLease is the unique-row lock as seed 001 first builds
// it: the row never expires, so a holder that dies holds it for ever.
func NewUniqueRowLockNoLease(c *harness.Client) harness.Locker { return &UniqueRowLock{c: c} }

// NewUniqueRowLockFenced is the unique-row lock with a lease and the
// cleanup job, without a watchdog, whose row id fences the resource: a
// holder whose row the cleanup deleted still overlaps the next one, but
// its stale write is refused.
func NewUniqueRowLockFenced(c *harness.Client) harness.Locker {
	return &UniqueRowLock{c: c, lease: true, fenced: true}
}

// NewUniqueRowLockLeased is the unique-row lock with a lease and the
// cleanup job, without a watchdog.
func NewUniqueRowLockLeased(c *harness.Client) harness.Locker {
	return &UniqueRowLock{c: c, lease: true}
}

// errDuplicate is MariaDB's "duplicate entry" for a unique key.
const errDuplicate = 1062

func (l *UniqueRowLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	db := l.c.SQL()
	if db == nil {
		return nil, errors.New("unique-row lock: no SQL server (the lock runs on topology " + string(cluster.SQL) + ")")
	}
	owner := newToken(l.c, &l.n)
	expires := "NULL"
	if l.lease {
		if _, err := db.ExecContext(ctx, "DELETE FROM "+cluster.LockTable+" WHERE name = ? AND expires_at < NOW(3)", key); err != nil {
			return nil, err
		}
		expires = "NOW(3) + INTERVAL ? MICROSECOND"
	}
	args := []any{key, owner}
	if l.lease {
		args = append(args, l.c.TTL().Microseconds())
	}
	res, err := db.ExecContext(ctx, "INSERT INTO "+cluster.LockTable+" (name, owner, expires_at) VALUES (?, ?, "+expires+")", args...)
	if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == errDuplicate {
		return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
	}
	if err != nil {
		return nil, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	lease := &UniqueRowLease{c: l.c, key: key, owner: owner, stop: make(chan struct{})}
	if l.fenced {
		lease.token = uint64(id)
	}
	if l.watchdog {
		l.c.Go(lease.renew)
	}
	return lease, nil
}

// UniqueRowLease is a lease of a UniqueRowLock.
type UniqueRowLease struct {
	c     *harness.Client
	key   string
	owner string
	token uint64        // the row's id when the lock is fenced, else 0
	stop  chan struct{} // closed by Release: the watchdog ends
}

// Token is the row's AUTO_INCREMENT id, which grows with every acquire,
// when the lock is fenced; 0 otherwise.
func (l *UniqueRowLease) Token() uint64 { return l.token }

// Release stops the watchdog and deletes the row if it is still ours.
func (l *UniqueRowLease) Release(ctx context.Context) error {
	close(l.stop)
	res, err := l.c.SQL().ExecContext(ctx, "DELETE FROM "+cluster.LockTable+" WHERE name = ? AND owner = ?", l.key, l.owner)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("%s: %w", l.key, harness.ErrNotHeld)
	}
	return nil
}

// renew is the watchdog of one lease: it extends the row's expiry while
// the row is still ours.
func (l *UniqueRowLease) renew(ctx context.Context) {
	ttl := l.c.TTL()
	watchdog(ctx, ttl, l.stop, func(ctx context.Context) (int, error) {
		res, err := l.c.SQL().ExecContext(ctx, "UPDATE "+cluster.LockTable+" SET expires_at = NOW(3) + INTERVAL ? MICROSECOND WHERE name = ? AND owner = ?",
			ttl.Microseconds(), l.key, l.owner)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	})
}
