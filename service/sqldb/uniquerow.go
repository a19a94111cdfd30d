package sqldb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// UniqueRowLock is seed 001's first database lock, on the SQL topologies
// (mariadb and postgres): a row of LockTable with a unique name,
// INSERTed to acquire and DELETEd (by its owner) to release. With a
// lease, the row carries an expiry in the server's clock, and an acquire
// first deletes the row of a lease run out, the seed's cleanup job; with a
// watchdog, the holder extends its lease every TTL/3 while it holds the
// lock. Fenced, the row's AUTO_INCREMENT (BIGSERIAL) id is the lease's
// fencing token, which the resource checks.
type UniqueRowLock struct {
	// NoExpiry leaves out the lease, and with it the watchdog: the row
	// never expires, as seed 001 first builds the lock, so a holder that
	// dies holds it for ever (package broken's row-no-expiry).
	NoExpiry bool

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

// For builds the lock of client c as NewUniqueRowLock does, unless l says
// NoExpiry: UniqueRowLock{...}.For is a harness.NewLocker.
func (l UniqueRowLock) For(c *harness.Client) harness.Locker {
	if l.NoExpiry {
		return &UniqueRowLock{c: c}
	}
	return NewUniqueRowLock(c)
}

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

// Acquire inserts the lock's row. The SQL is the same on MariaDB and
// PostgreSQL but for what the client's dialect writes: placeholders, the
// lease's end, and the refusal of a taken name. RETURNING (MariaDB 10.5 and
// later) gives the row's id on both, where pgx has no LastInsertId.
func (l *UniqueRowLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	conn := Of(l.c)
	if conn == nil {
		return nil, errors.New("unique-row lock: no SQL server (the lock runs on topologies " + string(cluster.MariaDBTopology) + " and " + string(cluster.PostgresTopology) + ")")
	}
	db, d := conn.DB(), conn.Dialect()
	l.n++
	owner := fmt.Sprintf("c%d-%d", l.c.ID(), l.n) // no other lease of this run has it
	expires := "NULL"
	if l.lease {
		if _, err := db.ExecContext(ctx, d.Query("DELETE FROM "+LockTable+" WHERE name = ? AND expires_at < "+d.Now()), key); err != nil {
			return nil, err
		}
		expires = d.NowPlus()
	}
	args := []any{key, owner}
	if l.lease {
		args = append(args, l.c.TTL().Microseconds())
	}
	var id int64
	err := db.QueryRowContext(ctx, d.Query("INSERT INTO "+LockTable+" (name, owner, expires_at) VALUES (?, ?, "+expires+") RETURNING id"), args...).Scan(&id)
	if d.Duplicate(err) {
		return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
	}
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
	res, err := Of(l.c).DB().ExecContext(ctx, Of(l.c).Dialect().Query("DELETE FROM "+LockTable+" WHERE name = ? AND owner = ?"), l.key, l.owner)
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
	ttl, d := l.c.TTL(), Of(l.c).Dialect()
	update := d.Query("UPDATE " + LockTable + " SET expires_at = " + d.NowPlus() + " WHERE name = ? AND owner = ?")
	watchdog(ctx, ttl, l.stop, func(ctx context.Context) (int, error) {
		res, err := Of(l.c).DB().ExecContext(ctx, update, ttl.Microseconds(), l.key, l.owner)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	})
}

// watchdog calls renew every ttl/3 until stop is closed, ctx ends, or
// renew reports that it renewed nothing (the lease is no longer ours). An
// error is an unknown outcome: it tries again at the next tick. It is
// reference's watchdog, which this package cannot import (reference
// imports the services).
func watchdog(ctx context.Context, ttl time.Duration, stop <-chan struct{}, renew func(context.Context) (int, error)) {
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n, err := renew(ctx); err == nil && n == 0 {
			return
		}
	}
}
