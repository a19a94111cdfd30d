package reference

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/harness"
	redisservice "github.com/locklab/locklab/service/redis"
)

// waitReplicas is pitfall 10's half-fix: the reentrant watchdog lock, plus
// WAIT 1 after taking it, so that a lock no replica has seen is given back.
// It closes the window of a replica that lags, not that of the replica that
// acknowledged being lost with the master.
type waitReplicas struct {
	*ReentrantLock
	c *harness.Client
}

// NewWaitReplicasLock builds the reentrant lock that waits for one replica.
func NewWaitReplicasLock(c *harness.Client) harness.Locker {
	return waitReplicas{NewReentrantLock(c).(*ReentrantLock), c}
}

// Acquire takes the lock and keeps it only if a replica acknowledged it
// within 100 ms.
func (l waitReplicas) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	// WAIT counts acknowledgements of this connection's own writes, so the
	// acquire and the WAIT must share one connection.
	conn := redisservice.Of(l.c).Conn()
	defer conn.Close()
	lease, err := l.AcquireOn(ctx, conn, key)
	if err != nil {
		return nil, err
	}
	acked, err := conn.Do(ctx, "WAIT", 1, 100).Int()
	if err != nil || acked < 1 {
		lease.Release(ctx)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: no replica acknowledged the lock: %w", key, harness.ErrNotAcquired)
	}
	return lease, nil
}
