// Package lock is your lock. Make `go test` pass: it runs the lock through
// locklab's pause-before-del scenario, where client 0 is paused in its
// release until its lease has expired and another client holds the lock.
package lock

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
)

// Lock takes a key on the client's Redis with SET NX PX.
type Lock struct {
	c *harness.Client
	n int // acquires so far, to make each token unique
}

// New builds the lock of one client.
func New(c *harness.Client) harness.Locker { return &Lock{c: c} }

// Acquire sets the key to a token of this client, with the lease as TTL.
func (l *Lock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	l.n++
	token := fmt.Sprintf("client-%d-%d", l.c.ID(), l.n)
	ok, err := redisservice.Of(l.c).SetNX(ctx, key, token, l.c.TTL()).Result()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, harness.ErrNotAcquired
	}
	return &Lease{c: l.c, key: key, token: token}, nil
}

// Lease is one hold of the lock.
type Lease struct {
	c          *harness.Client
	key, token string
}

// Release gives the lock back.
// TODO: this deletes the key whoever holds it now.
func (l *Lease) Release(ctx context.Context) error {
	return redisservice.Of(l.c).Del(ctx, l.key).Err()
}

// Token is 0: this lock hands out no fencing token.
func (l *Lease) Token() uint64 { return 0 }
