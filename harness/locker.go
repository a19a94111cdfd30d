package harness

import (
	"context"
	"database/sql"
	"errors"

	"github.com/locklab/locklab/footprint"
)

// ErrNotAcquired is wrapped by Acquire when another owner holds the lock.
var ErrNotAcquired = errors.New("lock not acquired: held by another owner")

// ErrNotHeld is wrapped by Release when the lock was no longer ours (it expired
// or someone else took it).
var ErrNotHeld = errors.New("lock not held")

// Locker is the lock under test, built once per client.
type Locker interface {
	// Acquire takes the lock on key. It returns an error wrapping ErrNotAcquired when
	// another owner holds it; any other error means the outcome is unknown.
	Acquire(ctx context.Context, key string) (Lease, error)
}

// Lease is one successful acquire.
type Lease interface {
	// Release gives the lock back. It wraps ErrNotHeld when the lock was no longer ours.
	Release(ctx context.Context) error
	// Token is the fencing token of this lease; 0 when the lock has none.
	Token() uint64
}

// TxLease is a Lease held by an open transaction on the lock's own
// connection, as SELECT … FOR UPDATE holds a row lock: the lock lives as
// long as the transaction, and Release commits it. When the inventory is
// in SQL on the lock's server, the runner's critical section reads
// and writes the stock in Tx, so the protected write commits with the
// lock or not at all: a holder whose connection the server closed (a
// kill, a timeout) has its stale write refused with the lock it lost.
type TxLease interface {
	Lease
	// Tx is the transaction that holds the lock, open until Release.
	Tx() *sql.Tx
}

// OptimisticLease is the lease of an optimistic lock, which is no lock at
// all: its Acquire succeeds at once for everyone, and what protects the
// resource is the write, made only if the data is still as the critical
// section read it. The runner's section writes the stock only if it is
// still what it read: in MariaDB with UPDATE … WHERE stock = (the stock
// read), in Redis with a compare-and-set script. The stock only goes down,
// so it serves as the row's version with no ABA; a write that finds it
// changed writes nothing and counts as rejected.
type OptimisticLease interface {
	Lease
	// Optimistic marks the lease; it does nothing.
	Optimistic()
}

// Warmer is a Locker that takes time to start, such as a lock program whose
// interpreter loads. A run warms every client's lock up at once before the
// workload and its faults start, and the liveness probe's before its wait,
// so that start-up never counts as the lock's time. Warm returns when the
// lock is ready; an error means it never will be, and the lock has said why
// (Client.Spoil).
type Warmer interface {
	Warm(ctx context.Context) error
}

// Footprinter is a Locker that learns its own footprint from the requests
// it sends (a lock program, through its relay): the key it took, the lease
// it holds, and where its hold lives. The runner records it with the run
// and reads the lock's state on the servers by its key.
type Footprinter interface {
	// Footprint is what the acquires that took the lock showed, and why
	// any of it could not be told.
	Footprint() (footprint.Footprint, []string)
}

// NewLocker builds the Locker of one client.
type NewLocker func(c *Client) Locker
