package broken

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
)

// noTTL is pitfall 3: SETNX with no expiry (seed 000 item 3, seed 003). A
// holder that crashes never releases, and nothing else ever will.
type noTTL struct {
	c *harness.Client
	n int
}

// NewNoTTL builds the broken lock of pitfall 3.
func NewNoTTL(c *harness.Client) harness.Locker { return &noTTL{c: c} }

func (l *noTTL) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	ok, err := redisservice.Of(l.c).SetNX(ctx, key, newToken(l.c, &l.n), 0).Result()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
	}
	return &delLease{c: l.c, key: key}, nil
}
