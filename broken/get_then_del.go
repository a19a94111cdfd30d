package broken

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/reference"
	redisservice "github.com/locklab/locklab/service/redis"
)

// getThenDel is pitfall 6: the owner check and the delete are two commands
// (seed 000 item 6, seed 002). Between GET and DEL the lease can expire and
// another client take the lock, which the DEL then frees.
type getThenDel struct {
	token harness.Locker
	c     *harness.Client
}

// NewGetThenDel builds the broken lock of pitfall 6.
func NewGetThenDel(c *harness.Client) harness.Locker {
	return getThenDel{token: reference.NewTokenLock(c), c: c}
}

func (l getThenDel) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	lease, err := l.token.Acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	return &getThenDelLease{c: l.c, key: key, token: lease.(*reference.TokenLease).Value()}, nil
}

type getThenDelLease struct {
	c     *harness.Client
	key   string
	token string
}

func (l *getThenDelLease) Token() uint64 { return 0 }

func (l *getThenDelLease) Release(ctx context.Context) error {
	v, err := redisservice.Of(l.c).Get(ctx, l.key).Result()
	if errors.Is(err, redis.Nil) || err == nil && v != l.token {
		return fmt.Errorf("%s: %w", l.key, harness.ErrNotHeld)
	}
	if err != nil {
		return err
	}
	return redisservice.Of(l.c).Del(ctx, l.key).Err()
}
