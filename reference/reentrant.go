package reference

import (
	"context"
	"fmt"
	"sync"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
	"github.com/redis/go-redis/v9"
)

// ReentrantLock is the lock seed 003 ends with: a hash whose field is the
// owner and whose value counts its holds, changed only by Lua scripts, with
// a watchdog that renews the key while the owner holds it. It is the
// reference lock where critical sections nest on one master.
type ReentrantLock struct {
	c     *harness.Client
	owner string

	mu    sync.Mutex
	holds map[string]*reentrantHold // per key, while this client holds it
}

type reentrantHold struct {
	count int
	stop  chan struct{}
}

// NewReentrantLock builds a ReentrantLock; one client is one owner.
func NewReentrantLock(c *harness.Client) harness.Locker {
	return &ReentrantLock{c: c, owner: fmt.Sprintf("c%d", c.ID()), holds: map[string]*reentrantHold{}}
}

// reentrantAcquire takes the lock when it is free or already ours, counting holds.
var reentrantAcquire = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 0 or redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
	redis.call("HINCRBY", KEYS[1], ARGV[1], 1)
	redis.call("PEXPIRE", KEYS[1], ARGV[2])
	return 1
end
return 0`)

// reentrantRelease takes one hold off; the last one deletes the key.
// It returns -1 when we hold nothing.
var reentrantRelease = redis.NewScript(`
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 0 then
	return -1
end
local n = redis.call("HINCRBY", KEYS[1], ARGV[1], -1)
if n <= 0 then
	redis.call("DEL", KEYS[1])
	return 0
end
return n`)

// reentrantRenew extends the key while we are its owner.
var reentrantRenew = redis.NewScript(`
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// Acquire takes the lock, or takes it once more if this client holds it.
func (l *ReentrantLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	return l.AcquireOn(ctx, redisservice.Of(l.c), key)
}

// AcquireOn is Acquire through rdb, one of the client's connections or its
// pool: a lock that follows the acquire with a command that must share its
// connection (WAIT) passes that connection.
func (l *ReentrantLock) AcquireOn(ctx context.Context, rdb redis.Scripter, key string) (harness.Lease, error) {
	ttl := l.c.TTL().Milliseconds()
	n, err := reentrantAcquire.Run(ctx, rdb, []string{key}, l.owner, ttl).Int()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.holds[key]
	if h == nil {
		h = &reentrantHold{stop: make(chan struct{})}
		l.holds[key] = h
		l.c.Go(func(ctx context.Context) { l.renew(ctx, key, h.stop) })
	}
	h.count++
	return &reentrantLease{l: l, key: key}, nil
}

type reentrantLease struct {
	l   *ReentrantLock
	key string
}

func (r *reentrantLease) Token() uint64 { return 0 }

// Release takes one hold off; the last one stops the watchdog.
func (r *reentrantLease) Release(ctx context.Context) error {
	l := r.l
	l.mu.Lock()
	if h := l.holds[r.key]; h != nil {
		if h.count--; h.count == 0 {
			close(h.stop)
			delete(l.holds, r.key)
		}
	}
	l.mu.Unlock()
	n, err := reentrantRelease.Run(ctx, redisservice.Of(l.c), []string{r.key}, l.owner).Int()
	if err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("%s: %w", r.key, harness.ErrNotHeld)
	}
	return nil
}

// renew is the watchdog of one key: it extends the key while we own it.
func (l *ReentrantLock) renew(ctx context.Context, key string, stop <-chan struct{}) {
	ttl := l.c.TTL()
	watchdog(ctx, ttl, stop, func(ctx context.Context) (int, error) {
		return reentrantRenew.Run(ctx, redisservice.Of(l.c), []string{key}, l.owner, ttl.Milliseconds()).Int()
	})
}
