package broken

import (
	"context"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/service/sqldb"
)

// NewRowNoExpiry is pitfall row-no-expiry's lock: the unique row with no
// expiry, held for ever by a holder that dies.
func NewRowNoExpiry(c *harness.Client) harness.Locker {
	return sqldb.UniqueRowLock{NoExpiry: true}.For(c)
}

// NewGetLockPool is pitfall get-lock-pool's lock: GET_LOCK and
// RELEASE_LOCK each on whichever connection the client's pool hands out,
// so the release may run on a session that does not hold the lock.
func NewGetLockPool(c *harness.Client) harness.Locker { return reference.GetLock{Pooled: true}.For(c) }

// NewAdvisoryPool is pitfall advisory-pool's lock: PostgreSQL's advisory
// lock taken and released on the pool, the same mistake.
func NewAdvisoryPool(c *harness.Client) harness.Locker {
	return reference.AdvisoryLock{Pooled: true}.For(c)
}

// NewNoLock is pitfall no-version-check's lock: no lock at all, and a
// plain write, so concurrent sections lose each other's updates. Its fix,
// the optimistic lock (reference.Optimistic), is no lock either, but
// writes only over the stock it read.
func NewNoLock(*harness.Client) harness.Locker { return noLock{} }

type noLock struct{}

// Acquire succeeds at once: there is nothing to take.
func (noLock) Acquire(context.Context, string) (harness.Lease, error) { return noLease{}, nil }

// noLease is the lease of no lock: its section's write is unchecked.
type noLease struct{}

func (noLease) Release(context.Context) error { return nil }
func (noLease) Token() uint64                 { return 0 }
