package reference

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
	"github.com/redis/go-redis/v9"
)

// Redlock is the lock of independent masters, as antirez describes it: SET
// NX PX on every master, a lease only when a majority said yes within the
// validity time, and an unlock on every node after a failed attempt. The
// random retry delay is the workload's. It is the reference lock of the
// redlock topology.
type Redlock struct {
	c *harness.Client
	n int // acquires so far, to make each token unique
}

// NewRedlock builds a Redlock over the client's Nodes.
func NewRedlock(c *harness.Client) harness.Locker { return &Redlock{c: c} }

// Acquire tries every node once and keeps the lock only with a quorum and
// time left.
func (l *Redlock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	nodes := redisservice.Nodes(l.c)
	ttl := l.c.TTL()
	token := newToken(l.c, &l.n)
	start := time.Now()
	votes := 0
	for _, node := range nodes {
		// A per-node timeout far below the TTL, so that a dead node does not
		// eat the whole lease.
		nctx, cancel := context.WithTimeout(ctx, ttl/10)
		// An error counts as a no; the unlock below cleans up after a
		// yes whose reply was lost.
		ok, _ := node.SetNX(nctx, key, token, ttl).Result()
		cancel()
		if ok {
			votes++
		}
	}
	drift := ttl/100 + 2*time.Millisecond
	validity := ttl - time.Since(start) - drift
	quorum := len(nodes)/2 + 1
	if votes < quorum || validity <= 0 {
		unlockAll(ctx, nodes, key, token)
		return nil, fmt.Errorf("%s: %d of %d nodes, validity %s: %w", key, votes, len(nodes), validity, harness.ErrNotAcquired)
	}
	return &redlockLease{nodes: nodes, key: key, token: token}, nil
}

// redlockLease is a lease of a Redlock.
type redlockLease struct {
	nodes []*redis.Client
	key   string
	token string
}

// Token is 0: Redlock cannot make a fencing token itself, as counters on a
// majority of nodes are not monotonic.
func (l *redlockLease) Token() uint64 { return 0 }

// Release deletes our key on every node; it was ours if a majority still had it.
func (l *redlockLease) Release(ctx context.Context) error {
	if deleted := unlockAll(ctx, l.nodes, l.key, l.token); deleted < len(l.nodes)/2+1 {
		return fmt.Errorf("%s: only %d nodes still held it: %w", l.key, deleted, harness.ErrNotHeld)
	}
	return nil
}

// unlockAll runs the compare-and-delete on every node and counts deletions.
func unlockAll(ctx context.Context, nodes []*redis.Client, key, token string) int {
	deleted := 0
	for _, node := range nodes {
		if n, err := releaseScript.Run(ctx, node, []string{key}, token).Int(); err == nil && n == 1 {
			deleted++
		}
	}
	return deleted
}
