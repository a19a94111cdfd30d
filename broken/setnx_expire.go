package broken

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
)

// setnxExpire is pitfall 1: SETNX, then EXPIRE as a second command (seed 000
// item 1). A crash between the two leaves a key that never expires.
type setnxExpire struct {
	c *harness.Client
	n int
}

// NewSetnxExpire builds the broken lock of pitfall 1.
func NewSetnxExpire(c *harness.Client) harness.Locker { return &setnxExpire{c: c} }

func (l *setnxExpire) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	token := newToken(l.c, &l.n)
	ok, err := redisservice.Of(l.c).SetNX(ctx, key, token, 0).Result()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
	}
	if err := redisservice.Of(l.c).PExpire(ctx, key, l.c.TTL()).Err(); err != nil {
		return nil, err
	}
	return &delLease{c: l.c, key: key}, nil
}
