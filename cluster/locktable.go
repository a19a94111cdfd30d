package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// LockTable is the table of the SQL topology's locks, one row per lock
// held, named by the lock key. A lock uses what it needs of it: id, an
// AUTO_INCREMENT, serves as a fencing token; expires_at, in the server's
// clock, is the lease of a lock that has one (NULL: none).
const LockTable = "locklab.locks"

// setupLockTable creates the lock table.
func setupLockTable(ctx context.Context, db *sql.DB) error {
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS locklab",
		"CREATE TABLE IF NOT EXISTS " + LockTable + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL UNIQUE, " +
			"owner VARCHAR(64) NOT NULL, expires_at DATETIME(3) NULL) ENGINE=InnoDB",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mariadb: set up the lock table: %w", err)
		}
	}
	return nil
}

// LockState reads the state of the lock named key where the topology keeps
// it, as Redis's PTTL reports a key: -2 when there is none, -1 when it has
// no expiry, else the time until it expires.
func (c *Cluster) LockState(ctx context.Context, key string) (time.Duration, error) {
	if c.lockDB != nil {
		var left sql.NullInt64
		err := c.lockDB.Admin().QueryRowContext(ctx,
			"SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), expires_at) FROM "+LockTable+" WHERE name = ?", key).Scan(&left)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return -2, nil
		case err != nil:
			return 0, fmt.Errorf("read the lock row: %w", err)
		case !left.Valid:
			return -1, nil
		}
		// An expired row not yet deleted is no lock.
		return max(time.Duration(left.Int64)*time.Microsecond, 0), nil
	}
	if c.etcd != nil {
		return c.etcdLockState(ctx, key)
	}
	master, err := c.Master(ctx)
	if err != nil {
		return 0, err
	}
	pttl, err := master.Admin().PTTL(ctx, key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("read the lock's PTTL: %w", err)
	}
	// go-redis reports -1 (no expiry) and -2 (no key) as those many
	// nanoseconds.
	return pttl, nil
}
