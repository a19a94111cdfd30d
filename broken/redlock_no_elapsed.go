package broken

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
)

// NewRedlockNoElapsed builds a Redlock written as users often write it,
// without its clock: SET NX PX on every node in turn, waiting for each as
// long as the client's own timeout allows, and a lease with any majority,
// however long the acquire took. When nodes are slow, the keys it took
// first have expired by the time it counts them, and another client takes
// them. It is not in the catalogue: locklab's tests and explore name it
// (locks.Tests) to check that such a lock is caught as its own bug.
func NewRedlockNoElapsed(c *harness.Client) harness.Locker { return &redlockNoElapsed{c: c} }

type redlockNoElapsed struct {
	c *harness.Client
	n int // acquires so far, to make each token unique
}

type redlockNoElapsedLease struct {
	nodes []*redis.Client
	key   string
	token string
}

// compareAndDelete deletes the key only while it holds the token.
var compareAndDelete = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// Acquire asks every node and keeps the lock with a majority; it never
// looks at the time that took.
func (l *redlockNoElapsed) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	l.n++
	lease := &redlockNoElapsedLease{nodes: redisservice.Nodes(l.c), key: key, token: fmt.Sprintf("c%d-%d", l.c.ID(), l.n)}
	votes := 0
	for _, node := range lease.nodes {
		if ok, _ := node.SetNX(ctx, key, lease.token, l.c.TTL()).Result(); ok {
			votes++
		}
	}
	if votes <= len(lease.nodes)/2 {
		lease.Release(ctx)
		return nil, fmt.Errorf("%s: %d of %d nodes: %w", key, votes, len(lease.nodes), harness.ErrNotAcquired)
	}
	return lease, nil
}

// Release deletes the key on every node where it is still ours.
func (l *redlockNoElapsedLease) Release(ctx context.Context) error {
	for _, node := range l.nodes {
		compareAndDelete.Run(ctx, node, []string{l.key}, l.token)
	}
	return nil
}

// Token is 0: Redlock makes no fencing token.
func (*redlockNoElapsedLease) Token() uint64 { return 0 }
