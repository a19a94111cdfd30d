package reference

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
	"github.com/redis/go-redis/v9"
)

// TokenLock is the correct single-node lock: SET key token NX PX ttl, and a
// release that deletes the key only if it still holds this lease's token,
// in one Lua script. The watchdog variant also renews the lease every TTL/3
// while it is held; it is the reference lock on one master.
type TokenLock struct {
	c        *harness.Client
	watchdog bool
	n        int // acquires so far, to make each token unique
	// prefix and lease are an application's settings (NewTokenLockAs):
	// the key is prefix+KEY, and the lease lease whatever the run's TTL.
	prefix string
	lease  time.Duration
	sent   func(args []any) // told the words of each SET sent, when set
}

// NewTokenLock builds a TokenLock without renewal.
func NewTokenLock(c *harness.Client) harness.Locker { return &TokenLock{c: c} }

// NewWatchdogLock builds a TokenLock that renews its lease while held.
func NewWatchdogLock(c *harness.Client) harness.Locker { return &TokenLock{c: c, watchdog: true} }

// NewTokenLockAs builds TokenLocks without renewal as an application
// configures one: each takes the key prefix+KEY with a lease of lease,
// whatever the run's TTL (0: the TTL). It is the Go twin of a lock program
// set up so (programs/redispy.py --prefix=P --lease-ms=N).
//
// Its locks learn their footprint from the SET each acquire sends, as a
// program's relay does from the program's (harness.Footprinter), so that a
// run knows their key and lease, and times its faults against that lease,
// as it does a program's.
func NewTokenLockAs(prefix string, lease time.Duration) harness.NewLocker {
	return func(c *harness.Client) harness.Locker {
		l := &learningLock{TokenLock: &TokenLock{c: c, prefix: prefix, lease: lease}}
		l.sent = l.note
		return l
	}
}

// learningLock is a TokenLock that learns its footprint from its own SETs.
type learningLock struct {
	*TokenLock
	learn footprint.Acquires
}

// Acquire is TokenLock's, its SET's words noted on the way.
func (l *learningLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	l.learn.Begin()
	lease, err := l.TokenLock.Acquire(ctx, key)
	l.learn.End(err == nil)
	return lease, err
}

// note learns what the words of a SET it sent show.
func (l *learningLock) note(args []any) {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = fmt.Sprint(a)
	}
	l.learn.Seen(footprint.Redis(words))
}

// Footprint is what its acquires that took the lock showed.
func (l *learningLock) Footprint() (footprint.Footprint, []string) { return l.learn.Footprint() }

// ttl is the lease the lock asks for.
func (l *TokenLock) ttl() time.Duration {
	if l.lease > 0 {
		return l.lease
	}
	return l.c.TTL()
}

// releaseScript deletes the key only if it still holds our token.
var releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// renewScript extends the key only if it still holds our token.
var renewScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// Acquire sets the key with our token and the TTL in one command. The lease
// is a *TokenLease.
func (l *TokenLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	token := newToken(l.c, &l.n)
	key = l.prefix + key
	cmd := redisservice.Of(l.c).SetNX(ctx, key, token, l.ttl())
	if l.sent != nil {
		l.sent(cmd.Args())
	}
	ok, err := cmd.Result()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
	}
	lease := &TokenLease{c: l.c, key: key, token: token, ttl: l.ttl(), stop: make(chan struct{})}
	if l.watchdog {
		l.c.Go(lease.renew)
	}
	return lease, nil
}

// TokenLease is a lease of a TokenLock.
type TokenLease struct {
	c     *harness.Client
	key   string
	token string
	ttl   time.Duration // the lease it asked for, which the watchdog renews
	stop  chan struct{} // closed by Release: the watchdog ends
}

// Token is 0: the token lock hands out no fencing token.
func (l *TokenLease) Token() uint64 { return 0 }

// Value is what the lease wrote at the key, which tells its owner; a lock
// built on TokenLock checks it to know whether the key is still its own.
func (l *TokenLease) Value() string { return l.token }

// Release stops the watchdog and deletes the key if it is still ours.
func (l *TokenLease) Release(ctx context.Context) error {
	close(l.stop)
	n, err := releaseScript.Run(ctx, redisservice.Of(l.c), []string{l.key}, l.token).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", l.key, harness.ErrNotHeld)
	}
	return nil
}

// renew is the watchdog of one lease.
func (l *TokenLease) renew(ctx context.Context) {
	ttl := l.ttl
	watchdog(ctx, ttl, l.stop, func(ctx context.Context) (int, error) {
		return renewScript.Run(ctx, redisservice.Of(l.c), []string{l.key}, l.token, ttl.Milliseconds()).Int()
	})
}

// watchdog calls renew every ttl/3 until stop closes, ctx ends, or renew
// returns 0: the lease is gone, and renewing someone else's would be worse.
func watchdog(ctx context.Context, ttl time.Duration, stop <-chan struct{}, renew func(context.Context) (int, error)) {
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n, err := renew(ctx); err == nil && n == 0 {
			return
		}
	}
}

// newToken makes a value no other lease of this run uses: the client's ID
// and a counter of its acquires.
func newToken(c *harness.Client, n *int) string {
	*n++
	return fmt.Sprintf("c%d-%d", c.ID(), *n)
}
