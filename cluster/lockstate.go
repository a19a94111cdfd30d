package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// LockState reads the state of the lock named key where the topology keeps
// it: through its deployment when its service is behind the seam, or by
// the key's PTTL on the Redis master.
func (c *Cluster) LockState(ctx context.Context, key string) (State, error) {
	if c.deployment != nil {
		return c.deployment.LockState(ctx, key)
	}
	master, err := c.Master(ctx)
	if err != nil {
		return Free, err
	}
	pttl, err := master.Admin().PTTL(ctx, key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return Free, fmt.Errorf("read the lock's PTTL: %w", err)
	}
	// go-redis reports Redis's -1 (no expiry) and -2 (no key) as those
	// many nanoseconds.
	switch pttl {
	case -2:
		return Free, nil
	case -1:
		return Unexpiring(), nil
	}
	return Until(pttl), nil
}
