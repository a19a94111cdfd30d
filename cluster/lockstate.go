package cluster

import (
	"context"
	"errors"
)

// LockState reads the state of the lock named key where the topology keeps
// it, through its service's deployment.
func (c *Cluster) LockState(ctx context.Context, key string) (State, error) {
	if c.deployment == nil {
		return Free, errors.New("cluster: no lock service deployed")
	}
	return c.deployment.LockState(ctx, key)
}
