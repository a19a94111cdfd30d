package pitfalls

import (
	"context"

	"github.com/locklab/locklab/harness"
)

// fencedLock is pitfall 12: the watchdog lock, plus a fencing token from INCR
// on the lock node that the resource checks. A client paused past its lease
// still believes it holds the lock, but its write carries an older token
// than the next holder's, and the resource refuses it.
type fencedLock struct{ TokenLock }

// NewFencedLock builds the fenced lock of pitfall 12.
func NewFencedLock(c *harness.Client) harness.Locker {
	return &fencedLock{TokenLock{c: c, watchdog: true}}
}

func (l *fencedLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	lease, err := l.TokenLock.Acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	// The token is taken after the lock, so a later holder always gets a
	// larger one.
	token, err := l.c.Redis().Incr(ctx, key+":fence").Uint64()
	if err != nil {
		lease.Release(ctx)
		return nil, err
	}
	tl := lease.(*tokenLease)
	tl.fence = token
	return tl, nil
}
