package libraries

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/bsm/redislock"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
)

// redislockLocker adapts github.com/bsm/redislock to harness.Locker.
type redislockLocker struct {
	c       *harness.Client
	client  *redislock.Client
	refresh bool
}

// NewRedislock builds a bsm/redislock lock on the client's master, with no
// retry and no renewal.
func NewRedislock(c *harness.Client) harness.Locker {
	return &redislockLocker{c: c, client: redislock.New(redisservice.Of(c))}
}

// NewRedislockRefresh builds a bsm/redislock lock whose lease is refreshed
// every TTL/3 until it is released or a refresh fails.
func NewRedislockRefresh(c *harness.Client) harness.Locker {
	return &redislockLocker{c: c, client: redislock.New(redisservice.Of(c)), refresh: true}
}

// Acquire obtains the lock once; the library's default RetryStrategy is
// NoRetry, set here explicitly all the same.
func (l *redislockLocker) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	ttl := l.c.TTL()
	lock, err := l.client.Obtain(ctx, key, ttl, &redislock.Options{RetryStrategy: redislock.NoRetry()})
	if errors.Is(err, redislock.ErrNotObtained) {
		return nil, fmt.Errorf("%s: %w: %w", key, err, harness.ErrNotAcquired)
	}
	if err != nil {
		return nil, err
	}
	lease := &redislockLease{lock: lock, stop: make(chan struct{})}
	if l.refresh {
		l.c.Go(func(ctx context.Context) {
			refreshLoop(ctx, ttl, lease.stop, func(ctx context.Context) error {
				return lock.Refresh(ctx, ttl, nil)
			})
		})
	}
	return lease, nil
}

type redislockLease struct {
	lock *redislock.Lock
	once sync.Once
	stop chan struct{} // closed by Release: the refresh loop ends
}

func (l *redislockLease) Token() uint64 { return 0 }

// Release stops the refresh loop and releases the lock if it is still ours.
func (l *redislockLease) Release(ctx context.Context) error {
	l.once.Do(func() { close(l.stop) })
	err := l.lock.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return fmt.Errorf("%s: %w: %w", l.lock.Key(), err, harness.ErrNotHeld)
	}
	return err
}
