package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/history"
)

// holdFault labels a HoldConn in the history.
const holdFault = "another user of the client's SQL pool"

// hold does a HoldConn: it takes the connection now and gives it back in
// the background when the client reaches a.Until (endHolds, which waits
// until the connection is back in the pool), after a.For, or when the
// client ends.
func (c *Client) hold(ctx context.Context, at failpoint.At, a failpoint.Action) error {
	name := at.Words
	pool, ok := c.handle.(Pooled)
	if !ok {
		return fmt.Errorf("failpoint %s: %s: the client has no SQL pool", name, a)
	}
	if c.Program() {
		// A lock program dials the server itself: the harness's pool is
		// not the one its lock uses.
		c.Spoil(fmt.Sprintf("failpoint %s: %s cannot reach client %d: a lock program has connections of its own", name, a, c.id))
		return nil
	}
	start := c.history.Now()
	conn, err := pool.DB().Conn(ctx)
	if err != nil {
		return fmt.Errorf("failpoint %s: take a connection of the pool: %w", name, err)
	}
	end, ended := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c.points.AddHold(a.Until, c.id, func() {
		once.Do(func() { close(end) })
		<-ended
	})
	c.Go(func(ctx context.Context) {
		defer close(ended)
		t := time.NewTimer(a.For)
		defer t.Stop()
		how := "until the client reached " + a.Until
		select {
		case <-end:
		case <-t.C:
			how = "for its longest, " + a.For.String()
		case <-ctx.Done():
			how = "until the client ended"
		}
		conn.Close() // back to the pool, as the last one returned
		stop := c.history.Now()
		op := c.onClient(failpoint.ActionKindName(a.Kind, at.Name), at, a)
		op.Call, op.Return, op.Fault, op.Effect = start, stop, holdFault, history.EffectStage
		op.Detail = fmt.Sprintf("failpoint %s: one of the client's pooled SQL connections held %s (%s)", name, how, (stop - start).Round(time.Millisecond))
		c.history.Add(op)
	})
	return nil
}
