package pitfalls

import (
	"context"

	"github.com/locklab/locklab/harness"
)

// NewRedlock builds pitfall 11's lock, Redlock over the client's Nodes
// (harness.Redlock).
func NewRedlock(c *harness.Client) harness.Locker { return harness.NewRedlock(c) }

// NewFencedRedlock is Redlock plus a fencing token from INCR on the first
// node. Redlock cannot make a token itself: counters on a majority of nodes
// are not monotonic. One counter node is what fencing needs, and its honest
// weakness is that it is one node.
func NewFencedRedlock(c *harness.Client) harness.Locker {
	return fencedRedlock{c: c, Locker: harness.NewRedlock(c)}
}

type fencedRedlock struct {
	harness.Locker
	c *harness.Client
}

func (l fencedRedlock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	return fence(ctx, l.c.Nodes()[0], key, l.Locker)
}
