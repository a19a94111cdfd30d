package broken

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/locklab/locklab/harness"
)

// inProcess is pitfall 0, seed 003's first stage: the sale guarded by a
// ReentrantLock field of the service. Each locklab client is one service
// instance, and each gets a Locker of its own, so each has its own mutex:
// two instances behind a load balancer never exclude each other.
//
// One mutex serves every key, as the seed's one lock field guards the one
// sale. It is not reentrant (a sync.Mutex), which no scenario of this
// pitfall needs.
type inProcess struct{ mu sync.Mutex }

// NewInProcess builds the broken lock of pitfall 0. It never talks to
// Redis: the lock lives and dies with its client, which is the point.
func NewInProcess(*harness.Client) harness.Locker { return &inProcess{} }

// Acquire refuses rather than blocks when another goroutine of this process
// holds the mutex, so that the caller's context and retries still apply as
// with any other lock. Only the client's own goroutines can ever be refused.
func (l *inProcess) Acquire(_ context.Context, key string) (harness.Lease, error) {
	if !l.mu.TryLock() {
		return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
	}
	return &inProcessLease{mu: &l.mu}, nil
}

// inProcessLease unlocks its mutex once: a second Unlock of a sync.Mutex is
// a fatal error that would take the whole run down, not a verdict.
type inProcessLease struct {
	mu       *sync.Mutex
	released atomic.Bool
}

func (*inProcessLease) Token() uint64 { return 0 }

func (l *inProcessLease) Release(context.Context) error {
	if l.released.Swap(true) {
		return harness.ErrNotHeld
	}
	l.mu.Unlock()
	return nil
}
