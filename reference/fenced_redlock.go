package reference

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
)

// NewFencedRedlock is Redlock plus a fencing token from INCR on the first
// node. Redlock cannot make a token itself: counters on a majority of nodes
// are not monotonic. One counter node is what fencing needs, and its honest
// weakness is that it is one node.
func NewFencedRedlock(c *harness.Client) harness.Locker {
	return fencedRedlock{c: c, Locker: NewRedlock(c)}
}

type fencedRedlock struct {
	harness.Locker
	c *harness.Client
}

// Acquire takes the Redlock, then its token. Redlock's validity counts from
// before its first SET, and nothing renews it, so a token that comes late
// (its counter node slow or paused) comes with a lease that may have run
// out: such a lease is given back. explore found this: without the check,
// a pause of the counter node handed out an expired lease.
func (l fencedRedlock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	start, ttl := time.Now(), l.c.TTL()
	lease, err := l.Locker.Acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	// As Redlock's own per-node timeout: a dead counter must not eat the lease.
	tctx, cancel := context.WithTimeout(ctx, ttl/10)
	token, err := redisservice.Nodes(l.c)[0].Incr(tctx, key+":fence").Uint64()
	cancel()
	drift := ttl/100 + 2*time.Millisecond
	left := ttl - time.Since(start) - drift
	switch {
	case err != nil:
		lease.Release(ctx)
		return nil, err
	case left <= 0:
		lease.Release(ctx)
		return nil, fmt.Errorf("%s: the fencing token came %s after the lease's validity: %w", key, -left, harness.ErrNotAcquired)
	}
	return fencedLease{Lease: lease, token: token}, nil
}
