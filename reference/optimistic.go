package reference

import (
	"context"

	"github.com/locklab/locklab/harness"
)

// Optimistic is seed 001 §3's optimistic lock, which is no lock: every
// Acquire succeeds at once, so every client works at the same time, and
// the protection is the write, made only if the data is unchanged since
// it was read (harness.OptimisticLease: with the inventory in MariaDB,
// UPDATE … WHERE stock = the stock read, the stock serving as the row's
// version). A write that lost the race is rejected and the sale is not
// made: correctness is bought with work thrown away under contention.
// Without the check (package broken's no-version-check) it is no
// protection at all.
type Optimistic struct{}

// NewOptimistic is the optimistic lock: no exclusion, a checked write.
func NewOptimistic(*harness.Client) harness.Locker { return Optimistic{} }

// Acquire succeeds at once: there is nothing to take.
func (l Optimistic) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	return optimisticLease{}, nil
}

// noLease is the lease of no lock.
type noLease struct{}

func (noLease) Release(context.Context) error { return nil }
func (noLease) Token() uint64                 { return 0 }

// optimisticLease asks the section for a checked write.
type optimisticLease struct{ noLease }

func (optimisticLease) Optimistic() {}
