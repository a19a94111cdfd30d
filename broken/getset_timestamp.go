package broken

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
)

// getsetTimestamp is pitfall 2, the PHP lock of seed 004 and item 2 of seed
// 000: the value is the expiry time by the client's own clock, a client that
// finds an "expired" value takes over with GETSET, and release deletes the key
// if the client thinks its lease has not expired yet. Nothing on the server
// expires; every client's clock decides.
type getsetTimestamp struct{ c *harness.Client }

// NewGetsetTimestamp builds the broken lock of pitfall 2.
func NewGetsetTimestamp(c *harness.Client) harness.Locker { return getsetTimestamp{c} }

func (l getsetTimestamp) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	rdb := redisservice.Of(l.c)
	expires := l.c.Now().Add(l.c.TTL()).UnixMilli()
	ok, err := rdb.SetNX(ctx, key, expires, 0).Result()
	if err != nil {
		return nil, err
	}
	if ok {
		return &timestampLease{c: l.c, key: key, expires: expires}, nil
	}
	old, err := rdb.Get(ctx, key).Int64()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired) // released meanwhile: try again
	}
	if err != nil {
		return nil, err
	}
	if old >= l.c.Now().UnixMilli() {
		return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
	}
	// "Expired" by our clock: take over, unless someone else's GETSET beat us.
	expires = l.c.Now().Add(l.c.TTL()).UnixMilli()
	//lint:ignore SA1019 GETSET is the command seed 004's lock uses; the pitfall is its own.
	prev, err := rdb.GetSet(ctx, key, expires).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	if prev != old {
		return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
	}
	return &timestampLease{c: l.c, key: key, expires: expires}, nil
}

type timestampLease struct {
	c       *harness.Client
	key     string
	expires int64 // unix ms, by the acquiring client's clock
}

func (l *timestampLease) Token() uint64 { return 0 }

// Release deletes the key if, by this client's clock, the lease is still ours.
func (l *timestampLease) Release(ctx context.Context) error {
	if l.c.Now().UnixMilli() >= l.expires {
		return fmt.Errorf("%s: expired at %s: %w", l.key,
			time.UnixMilli(l.expires).Format(time.TimeOnly), harness.ErrNotHeld)
	}
	return redisservice.Of(l.c).Del(ctx, l.key).Err()
}
