package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
)

// ActionHold is another part of the client's process using its SQL pool:
// it takes one pooled connection and keeps it busy for a while.
const ActionHold ActionKind = "hold-conn"

// HoldConn makes the failpoint take one connection of the client's SQL
// pool, as another goroutine of the same process running a query would,
// and keep it until this same client reaches failpoint until (at most
// max). database/sql hands out the connection returned last, so the hold
// takes the one the client used last, and what the client sends meanwhile
// goes over another; when the hold ends, at the very moment the client
// reaches until, its connection is again the one returned last. A lock
// that keeps state in a connection's session (PostgreSQL's advisory
// locks) thus takes it on one connection and, after until, sends its
// next request on the other: on every run, not by the pool's chance.
func HoldConn(until string, max time.Duration) Action {
	return Action{Kind: ActionHold, For: max, Until: until}
}

// holdFault labels a HoldConn in the history.
const holdFault = "another user of the client's SQL pool"

// hold does a HoldConn: it takes the connection now and gives it back in
// the background when the client reaches a.Until (endHolds, which waits
// until the connection is back in the pool), after a.For, or when the
// client ends.
func (c *Client) hold(ctx context.Context, name string, a Action) error {
	if c.sql == nil {
		return fmt.Errorf("failpoint %s: %s: the client has no SQL pool", name, a)
	}
	if c.Program() {
		// A lock program dials the server itself: the harness's pool is
		// not the one its lock uses.
		c.Spoil(fmt.Sprintf("failpoint %s: %s cannot reach client %d: a lock program has connections of its own", name, a, c.id))
		return nil
	}
	start := c.history.Now()
	conn, err := c.sql.Conn(ctx)
	if err != nil {
		return fmt.Errorf("failpoint %s: take a connection of the pool: %w", name, err)
	}
	end, ended := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c.points.addHold(a.Until, c.id, func() {
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
		c.history.Add(history.Op{Client: c.id, Kind: history.KindFault, Call: start, Return: stop, Fault: holdFault,
			Effect: history.EffectStage, Crux: a.crux,
			Detail: fmt.Sprintf("failpoint %s: one of the client's pooled SQL connections held %s (%s)", name, how, (stop - start).Round(time.Millisecond))})
	})
	return nil
}

// addHold registers end, which ends a HoldConn of client when it next
// reaches failpoint name.
func (f *Failpoints) addHold(name string, client int, end func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.holds == nil {
		f.holds = map[string]map[int][]func(){}
	}
	if f.holds[name] == nil {
		f.holds[name] = map[int][]func(){}
	}
	f.holds[name][client] = append(f.holds[name][client], end)
}

// endHolds ends the HoldConns of client waiting for failpoint name, and
// returns once their connections are back in the pool.
func (f *Failpoints) endHolds(name string, client int) {
	f.mu.Lock()
	ends := f.holds[name][client]
	delete(f.holds[name], client)
	f.mu.Unlock()
	for _, end := range ends {
		end()
	}
}
