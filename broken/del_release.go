package broken

import (
	"context"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/reference"
	redisservice "github.com/locklab/locklab/service/redis"
)

// delRelease is pitfall 5: a correct SET NX PX, released with a plain DEL
// (seed 000 item 5, seed 002). If our lease expired meanwhile, the DEL frees
// whoever holds the lock now.
type delRelease struct {
	token harness.Locker
	c     *harness.Client
}

// NewDelRelease builds the broken lock of pitfall 5.
func NewDelRelease(c *harness.Client) harness.Locker {
	return delRelease{token: reference.NewTokenLock(c), c: c}
}

func (l delRelease) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	if _, err := l.token.Acquire(ctx, key); err != nil {
		return nil, err
	}
	return &delLease{c: l.c, key: key}, nil
}

// delLease releases with a DEL that does not look at who holds the key.
type delLease struct {
	c   *harness.Client
	key string
}

func (l *delLease) Token() uint64 { return 0 }

func (l *delLease) Release(ctx context.Context) error {
	return redisservice.Of(l.c).Del(ctx, l.key).Err()
}
