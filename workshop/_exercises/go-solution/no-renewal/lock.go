// Package lock is the reference solution of the no-renewal exercise.
package lock

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
	"github.com/redis/go-redis/v9"
)

// Lock takes a key on the client's Redis with SET NX PX, and renews it
// while it is held.
type Lock struct {
	c *harness.Client
	n int // acquires so far, to make each token unique
}

// New builds the lock of one client.
func New(c *harness.Client) harness.Locker { return &Lock{c: c} }

// Acquire sets the key to a token of this client, with the lease as TTL,
// and starts the watchdog that renews it.
func (l *Lock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	l.n++
	token := fmt.Sprintf("client-%d-%d", l.c.ID(), l.n)
	ok, err := redisservice.Of(l.c).SetNX(ctx, key, token, l.c.TTL()).Result()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, harness.ErrNotAcquired
	}
	lease := &Lease{c: l.c, key: key, token: token, stop: make(chan struct{})}
	// c.Go, not go: the watchdog stops when the client crashes, as a
	// process's threads do.
	l.c.Go(lease.renew)
	return lease, nil
}

// Lease is one hold of the lock.
type Lease struct {
	c          *harness.Client
	key, token string
	stop       chan struct{} // closed by Release: the watchdog ends
}

var (
	// release deletes the key only if it still holds our token.
	release = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)
	// renew extends the key only if it still holds our token.
	renew = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)
)

// renew extends the lease every TTL/3 until Release, or until the key is
// no longer ours.
func (l *Lease) renew(ctx context.Context) {
	t := time.NewTicker(l.c.TTL() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.stop:
			return
		case <-t.C:
		}
		n, err := renew.Run(ctx, redisservice.Of(l.c), []string{l.key}, l.token, l.c.TTL().Milliseconds()).Int()
		if err == nil && n == 0 {
			return // lost it: nothing left to renew
		}
	}
}

// Release stops the watchdog and gives the lock back if it is still ours.
func (l *Lease) Release(ctx context.Context) error {
	close(l.stop)
	n, err := release.Run(ctx, redisservice.Of(l.c), []string{l.key}, l.token).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return harness.ErrNotHeld
	}
	return nil
}

// Token is 0: this lock hands out no fencing token.
func (l *Lease) Token() uint64 { return 0 }
