package scenarios

import (
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/runner"
)

// etcdTTL is the lease of the etcd scenarios: etcd's leases count in whole
// seconds, and one second is the shortest the cluster's Raft timing
// grants (1.5 election timeouts, rounded up).
const etcdTTL = time.Second

// etcd lists the scenarios of the etcd topology: the inventory
// is a key of the etcd cluster itself, so that a lock's lease can guard
// the write to it.
func etcd() []runner.Scenario {
	return []runner.Scenario{
		{
			Name: "contention-etcd",
			Description: "On a three-member etcd cluster, the lock an etcd key attached to a lease: four clients compete " +
				"for one lock with short critical sections and no fault. The stock is an etcd key.",
			Topology: cluster.EtcdTopology,
			Workload: runner.Workload{TTL: etcdTTL, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond, Resource: runner.EtcdResource},
		},
		{
			Name: "pause-holder-etcd",
			Description: "On a three-member etcd cluster: client 0 is paused (stop-the-world, its lease keep-alives included) " +
				"for 2.5 s inside its second critical section, after reading the stock (an etcd key): two and a half " +
				"leases of 1 s, so etcd revokes its lease and another client takes the lock.",
			Topology: cluster.EtcdTopology,
			Workload: runner.Workload{TTL: etcdTTL, Work: 10 * time.Millisecond, Duration: 3 * time.Second, Resource: runner.EtcdResource},
			Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Client: 0, Skip: 1,
				Action: failpoint.Pause(5 * etcdTTL / 2), Crux: true}},
		},
		{
			Name: "kill-leader-etcd",
			Description: "On a three-member etcd cluster: inside client 0's second critical section, the etcd leader " +
				"is killed (SIGKILL) and restarted with its data 1.5 s later; the holder works on for 300 ms, then writes " +
				"the stock (an etcd key) and releases. The members left elect a leader that has every committed key.",
			Topology: cluster.EtcdTopology,
			Workload: runner.Workload{TTL: etcdTTL, Work: 10 * time.Millisecond, Duration: 3 * time.Second, Resource: runner.EtcdResource},
			Failpoints: []failpoint.Point{
				{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Inject(fault.KillLeader{}, 1500*time.Millisecond), Crux: true},
				{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Sleep(300 * time.Millisecond)},
			},
		},
	}
}
