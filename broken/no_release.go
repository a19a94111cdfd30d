package broken

import (
	"context"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/reference"
)

// noRelease is pitfall 4: the business logic never releases the lock (seed 000
// item 4), so every waiter waits for the TTL to run out.
type noRelease struct{ token harness.Locker }

// NewNoRelease builds the broken lock of pitfall 4.
func NewNoRelease(c *harness.Client) harness.Locker { return noRelease{reference.NewTokenLock(c)} }

func (l noRelease) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	if _, err := l.token.Acquire(ctx, key); err != nil {
		return nil, err
	}
	return forgotten{}, nil
}

// forgotten is a lease whose owner forgets to give it back.
type forgotten struct{}

func (forgotten) Token() uint64                 { return 0 }
func (forgotten) Release(context.Context) error { return nil }
