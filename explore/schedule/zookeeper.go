package schedule

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
)

// Workload shape of the zookeeper topology: a session timeout (the
// clients' TTL) as long as etcd's shortest lease, so that the two
// consensus services are drawn alike; the kinds of plan_etcd.go are drawn
// on ZooKeeper too.
const (
	zkTTL    = time.Second
	zkRunFor = 4 * time.Second
)

// zkKinds are the faults drawn on ZooKeeper alone.
var zkKinds = []kind{
	{Kind: Kind{Name: "kill-server", About: "a ZooKeeper server, the leader or not, is killed while a client holds the lock and restarted with its data or empty (it then takes a snapshot from the leader), at once or after a lease", Services: []cluster.Service{cluster.ZooKeeper}},
		weight: 2, draw: (*drawer).killServer},
}

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

// init adds the ZooKeeper kinds to allKinds after every other (plan_etcd.go
// runs first: files initialize in name order), so that the draws of the
// other topologies stay as they were.
func init() { allKinds = append(allKinds, zkKinds...) }
