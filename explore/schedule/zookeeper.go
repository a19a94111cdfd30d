package schedule

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
)

// The kinds drawn on ZooKeeper alone (kill-server, clock-jump-server) are
// in kinds.go's list.

// killServer kills one of the three servers while a client holds the
// lock; a quorum is left, so the lock's node survives, even when the
// server comes back empty.
func (d *drawer) killServer() Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	restart := time.Duration(0)
	if d.rng.IntN(2) == 0 {
		restart = d.ttl + 500*time.Millisecond
	}
	f := fault.KillNode{Node: d.rng.IntN(cluster.ZooKeeperServers), KeepData: d.rng.IntN(2) == 0}
	return Fault{What: fmt.Sprintf("while %s holds the lock (%s): %s, after %s", who(c), hits(c, skip, 1), f, restart),
		Failpoints: []failpoint.Point{d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Inject(f, restart))}}
}

// clockJumpServer jumps the wall clock of one server, or of every one,
// while a client holds the lock, and lets the holder work on: a session
// timed by the wall clock would expire at once, and the next waiter would
// take the lock from a holder still at work.
func (d *drawer) clockJumpServer() Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	node := fault.EveryServer
	if d.rng.IntN(2) == 0 {
		node = d.rng.IntN(cluster.ZooKeeperServers)
	}
	f := fault.ClockJumpServer{Node: node, By: time.Duration(pick(d, 1, 3, 10)) * d.ttl}
	work := d.between(d.ttl/4, 2*d.ttl)
	return Fault{What: fmt.Sprintf("while %s holds the lock (%s): %s; the holder works %s more", who(c), hits(c, skip, 1), f, work),
		Failpoints: []failpoint.Point{
			d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Inject(f, 0)),
			d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Sleep(work)),
		}}
}
