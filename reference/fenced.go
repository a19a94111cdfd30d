package reference

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
)

// NewFencedLock builds pitfall 12's lock: the watchdog lock, plus a fencing
// token from INCR on the lock node that the resource checks. A client
// paused past its lease still believes it holds the lock, but its write
// carries an older token than the next holder's, and the resource refuses
// it.
func NewFencedLock(c *harness.Client) harness.Locker {
	return fencedLock{c: c, Locker: NewWatchdogLock(c)}
}

type fencedLock struct {
	harness.Locker
	c *harness.Client
}

func (l fencedLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	return fence(ctx, redisservice.Of(l.c), key, l.Locker)
}

// fence takes lock, then a fencing token from INCR key:fence on counter.
// The token is taken after the lock, so a later holder always gets a larger
// one.
func fence(ctx context.Context, counter *redis.Client, key string, lock harness.Locker) (harness.Lease, error) {
	lease, err := lock.Acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	token, err := counter.Incr(ctx, key+":fence").Uint64()
	if err != nil {
		lease.Release(ctx)
		return nil, err
	}
	return fencedLease{Lease: lease, token: token}, nil
}

// fencedLease is a lease with the fencing token fence took.
type fencedLease struct {
	harness.Lease
	token uint64
}

func (l fencedLease) Token() uint64 { return l.token }
