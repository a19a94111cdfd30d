package schedule

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
)

// The kinds drawn on etcd's members (kill-leader, pause-member; on
// ZooKeeper's servers too) are in kinds.go's list.

// killLeader is kill-leader-etcd's (and kill-leader-zk's) story: while a client holds the lock,
// the leader is killed, restarted at once or after a lease; the holder
// works on briefly meanwhile, then writes and releases.
func (d *drawer) killLeader() Fault { return d.killWhileHeld(fault.KillLeader{}) }

// killWhileHeld kills what f kills while a client holds the lock and lets
// the heal restart it, at once or after a lease; the holder works on
// briefly meanwhile, then writes and releases.
func (d *drawer) killWhileHeld(f fault.Fault) Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	restart := time.Duration(0)
	if d.rng.IntN(2) == 0 {
		restart = d.ttl + 500*time.Millisecond
	}
	work := d.between(100*time.Millisecond, d.ttl/2)
	return Fault{What: fmt.Sprintf("while %s holds the lock (%s): %s, after %s; the holder works %s more", who(c), hits(c, skip, 1), f, restart, work),
		Failpoints: []failpoint.Point{
			d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Inject(f, restart)),
			d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Sleep(work)),
		}}
}

// pauseMember pauses one of the three etcd members or ZooKeeper servers,
// the leader or not.
func (d *drawer) pauseMember() Fault {
	return d.scheduled(fault.PauseNode{Node: d.rng.IntN(cluster.EtcdMembers)}, d.shortOrLong())
}
