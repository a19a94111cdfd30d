package scenarios

import (
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/runner"
)

// zkTTL is the session timeout of the zookeeper scenarios (a client's
// session timeout is its TTL): as long as etcd's shortest lease, so that
// the two services are judged alike, and five of the servers' ticks.
const zkTTL = time.Second

// zookeeper lists the scenarios of the zookeeper topology: the
// inventory is the Redis node, which checks a fencing token when the lease
// carries one.
func zookeeper() []runner.Scenario {
	return []runner.Scenario{
		{
			Name: "contention-zk",
			Description: "On a three-server ZooKeeper ensemble, the lock an ephemeral sequential node: four clients compete " +
				"for one lock with short critical sections and no fault.",
			Topology: cluster.ZooKeeperTopology,
			Workload: runner.Workload{TTL: zkTTL, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond},
		},
		{
			Name: "pause-holder-zk",
			Description: "On a three-server ZooKeeper ensemble: client 0 is paused (stop-the-world, its session's heartbeats " +
				"included) for 2.5 s inside its second critical section, after reading the stock: two and a half session " +
				"timeouts of 1 s, so the ensemble expires its session, deletes its node, and another client takes the lock.",
			Topology: cluster.ZooKeeperTopology,
			Workload: runner.Workload{TTL: zkTTL, Work: 10 * time.Millisecond, Duration: 3 * time.Second},
			Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Client: 0, Skip: 1,
				Action: failpoint.Pause(5 * zkTTL / 2), Crux: true}},
		},
		{
			Name: "kill-leader-zk",
			Description: "On a three-server ZooKeeper ensemble: inside client 0's second critical section, the ZooKeeper " +
				"leader is killed (SIGKILL) and restarted with its data 1.5 s later; the holder works on for 300 ms, then " +
				"writes the stock and releases. The servers left elect a leader that has every committed node.",
			Topology: cluster.ZooKeeperTopology,
			Workload: runner.Workload{TTL: zkTTL, Work: 10 * time.Millisecond, Duration: 3 * time.Second},
			Failpoints: []failpoint.Point{
				{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Inject(fault.KillLeader{}, 1500*time.Millisecond), Crux: true},
				{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Sleep(300 * time.Millisecond)},
			},
		},
		{
			Name: "clock-jump-zk",
			Description: "On a three-server ZooKeeper ensemble: inside client 0's second critical section, the wall clock " +
				"of every server jumps 10 s forward (ten session timeouts; libfaketime in each JVM, the monotonic clock " +
				"untouched), and the holder works on for 1.5 s, past a session timeout. ZooKeeper times sessions with " +
				"the monotonic clock, so no session expires and the lock stays with its holder.",
			Topology: cluster.ZooKeeperTopology,
			Workload: runner.Workload{TTL: zkTTL, Work: 10 * time.Millisecond, Duration: 3 * time.Second},
			Failpoints: []failpoint.Point{
				{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Inject(fault.ClockJumpServer{Node: fault.EveryServer, By: 10 * zkTTL}, 0), Crux: true},
				{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Sleep(3 * zkTTL / 2)},
			},
		},
	}
}
