// Package lock is the reference solution of the failover exercise.
package lock

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
	"github.com/redis/go-redis/v9"
)

// Lock takes a key on the client's Redis with SET NX PX.
type Lock struct {
	c *harness.Client
	n int // acquires so far, to make each token unique
}

// New builds the lock of one client.
func New(c *harness.Client) harness.Locker { return &Lock{c: c} }

// Acquire sets the key to a token of this client, with the lease as TTL,
// and keeps it only if a replica acknowledged it within 100 ms.
func (l *Lock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	l.n++
	token := fmt.Sprintf("client-%d-%d", l.c.ID(), l.n)
	// WAIT counts the acknowledgements of this connection's own writes:
	// the SET and the WAIT must share one connection.
	conn := redisservice.Of(l.c).Conn()
	defer conn.Close()
	ok, err := conn.SetNX(ctx, key, token, l.c.TTL()).Result()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, harness.ErrNotAcquired
	}
	lease := &Lease{c: l.c, key: key, token: token}
	acked, err := conn.Do(ctx, "WAIT", 1, 100).Int()
	if err != nil || acked < 1 {
		// A lock no replica has would be lost with the master: give it back.
		lease.Release(ctx)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no replica acknowledged the lock: %w", harness.ErrNotAcquired)
	}
	return lease, nil
}

// Lease is one hold of the lock.
type Lease struct {
	c          *harness.Client
	key, token string
}

// release deletes the key only if it still holds our token: the check and
// the delete in one script, which Redis runs without interleaving.
var release = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// Release gives the lock back if it is still ours.
func (l *Lease) Release(ctx context.Context) error {
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
