package scenarios

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/runner"
)

// Compared lists the scenarios that only `check compare` runs: each
// strikes a fault class on a service whose other scenarios have none of
// it, so that every lock of the comparison has a cell there.
// They are out of All, so that a -lock run over every scenario of its
// topologies, and the tests that run every scenario of a service, do not
// pay for them; Lookup finds them.
func Compared() []runner.Scenario {
	// Requests give up after 500 ms, as blind's commands do, so a lost
	// reply costs half a second.
	sqlWork := runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond, Timeout: 500 * time.Millisecond}
	etcdWork := runner.Workload{TTL: etcdTTL, Work: 100 * time.Millisecond, Duration: 5 * time.Second, Resource: runner.EtcdResource}
	zkWork := runner.Workload{TTL: zkTTL, Work: 100 * time.Millisecond, Duration: 5 * time.Second}
	out := []runner.Scenario{
		cutOff("holder-cut-off-etcd", "a three-member etcd cluster", "its lease's keep-alives", cluster.EtcdTopology, etcdWork),
		cutOff("holder-cut-off-zk", "a three-server ZooKeeper ensemble", "its session's heartbeats", cluster.ZooKeeperTopology, zkWork),
		{
			Name: "redlock-cut-off",
			Description: "Redlock over five masters: right after its second acquire, client 0 is cut off from nodes 0-2, a majority " +
				"(connections reset and refused), for two TTLs: its renewals and its release reach only the two nodes left, its keys on " +
				"the majority expire and another client takes the lock; then the cut heals.",
			Topology: cluster.Redlock,
			Workload: runner.Workload{TTL: redlockTTL, Work: 100 * time.Millisecond, Duration: 2 * time.Second},
			Failpoints: []failpoint.Point{{Name: failpoint.Acquired, Client: 0, Skip: 1,
				Action: failpoint.Inject(fault.Partition{Client: 0, Nodes: []int{0, 1, 2}}, 2*redlockTTL), Crux: true}},
		},
		lostReply("lost-acquire-reply-sql", "one MariaDB server", "statement", cluster.MariaDBTopology, sqlWork),
		lostReply("lost-acquire-reply-postgres", "one PostgreSQL server", "statement", cluster.PostgresTopology, sqlWork),
		lostReply("lost-acquire-reply-etcd", "a three-member etcd cluster", "request",
			cluster.EtcdTopology, runner.Workload{TTL: etcdTTL, Work: 10 * time.Millisecond, Duration: 3 * time.Second, Resource: runner.EtcdResource, Timeout: time.Second}),
		lostReply("lost-acquire-reply-redlock", "five independent masters (Redlock)", "command, to node 0,", cluster.Redlock,
			runner.Workload{TTL: redlockTTL, Work: 100 * time.Millisecond, Duration: 2 * time.Second, Timeout: 500 * time.Millisecond}),
		lostReplyZK(),
		clockJumpMemcached(),
		restartSQL(cluster.MariaDBTopology, "a GET_LOCK is lost"),
		restartSQL(cluster.PostgresTopology, "an advisory lock is lost"),
		{
			Name: "pool-postgres",
			Description: "On one PostgreSQL server, with the inventory a row of the same server: the four clients are the request threads " +
				"of one service and share its pool of 3 connections (one fewer than the requests that may wait for the lock at once), for " +
				fmt.Sprintf("the lock and the inventory alike. Short critical sections, no fault; a statement, a lock wait included, may take %s.", poolWait),
			Topology: cluster.PostgresTopology,
			Workload: runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond, Resource: runner.PostgresResource,
				Pool: 3, Timeout: poolWait},
		},
	}
	out = append(out, sharedPools()...)
	out = append(out, clockJumpSQL(cluster.MariaDBTopology), clockJumpSQL(cluster.PostgresTopology))
	// The replicated topology's locks (WAIT) meet the single node's
	// faults through Sentinel's master.
	for _, name := range []string{"pause-holder", "holder-cut-off", "clock-skew", "lost-acquire-reply"} {
		s, err := lookupIn(All(), name)
		if err != nil {
			panic(err) // All lists every one of names
		}
		s.Name += "-replicated"
		s.Description = "On a master with two replicas and three Sentinels, clients reaching the master through Sentinel: " + s.Description
		s.Topology = cluster.Replicated
		out = append(out, s)
	}
	return out
}

// cutOff is a scenario in which, right after its second acquire, client
// 0 is cut off from every server of topology t for three leases of work's
// TTL, then the cut heals.
func cutOff(name, where, renewals string, t cluster.Topology, work runner.Workload) runner.Scenario {
	return runner.Scenario{
		Name: name,
		Description: fmt.Sprintf("On %s: right after its second acquire, client 0 is cut off from every server (connections reset "+
			"and refused) for %s, three leases: %s and its release cannot reach them, its lease ends and another client takes the "+
			"lock; then the cut heals.", where, 3*work.TTL, renewals),
		Topology: t,
		Workload: work,
		Failpoints: []failpoint.Point{{Name: failpoint.Acquired, Client: 0, Skip: 1,
			Action: failpoint.Inject(fault.Partition{Client: 0}, 3*work.TTL), Crux: true}},
	}
}

// lostReply is lost-acquire-reply on topology t: four times, the reply to
// the first request of one of client 0's acquires is dropped.
func lostReply(name, where, request string, t cluster.Topology, work runner.Workload) runner.Scenario {
	return runner.Scenario{
		Name: name,
		Description: fmt.Sprintf("On %s: four times, the reply to the first %s of one of client 0's acquires is dropped: it runs "+
			"on the server (and, under contention, is mostly refused), the client waits its %s timeout and sees a timeout. A lock "+
			"that takes a timeout for success enters while another client holds the lock; one whose hold lives in the session "+
			"may keep a lock it does not know it has.", where, request, work.Timeout),
		Topology: t,
		Workload: work,
		Failpoints: []failpoint.Point{{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 0, Skip: 2, Times: 4,
			Action: failpoint.DropReply()}},
	}
}

// lostReplyZK is lost-acquire-reply on the ZooKeeper ensemble. A client's
// requests reach it through a relay of ZooKeeper's jute (a Go lock's too:
// service/zookeeper's Dial), which drops a reply by ending the connection
// once the client's timeout has passed, its pings passing meanwhile: the
// session outlives the connection, and so does the node the create made.
func lostReplyZK() runner.Scenario {
	work := runner.Workload{TTL: zkTTL, Work: 10 * time.Millisecond, Duration: 3 * time.Second, Timeout: 500 * time.Millisecond}
	return runner.Scenario{
		Name: "lost-acquire-reply-zk",
		Description: "On a three-server ZooKeeper ensemble: four times, the reply to the first request of one of client 0's " +
			"acquires (the create of its ephemeral sequential node) is dropped: the node is made, the client waits its 500 ms " +
			"timeout and sees its connection end, while its session (1 s) lives on through another. A lock that does not look " +
			"for the node it made leaves it queued, and then holding the lock for nobody, until its session ends.",
		Topology: cluster.ZooKeeperTopology,
		Workload: work,
		Failpoints: []failpoint.Point{{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 0, Skip: 2, Times: 4,
			Action: failpoint.DropReply()}},
	}
}

// clockJumpMemcached is a jump of the memcached server's clocks under a
// holder. memcached counts expiry by a tick it reads from CLOCK_MONOTONIC
// (memcached.c, clock_handler), which a step of the wall clock (NTP, an
// operator) does not move; libfaketime moves both (a local process; the
// docker image has none, and that run is unknown: fault.ClockJumpServer).
// So this is the clock memcached reads jumping, as a hypervisor's or a
// broken clock source's step does, not an NTP step.
func clockJumpMemcached() runner.Scenario {
	return runner.Scenario{
		Name: "clock-jump-memcached",
		Description: fmt.Sprintf("On one memcached server: inside client 0's second critical section, the server's clocks jump "+
			"%s forward, its monotonic clock included, which its expiry counts by (libfaketime in its process): every item's "+
			"expiry, the held lock's included, passes at its next tick. The holder works on for 1.5 s, then writes the stock and releases.",
			5*mcTTL),
		Topology: cluster.MemcachedTopology,
		Workload: runner.Workload{TTL: mcTTL, Work: 100 * time.Millisecond, Duration: 4 * time.Second},
		Failpoints: []failpoint.Point{
			{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Inject(fault.ClockJumpServer{Node: 0, By: 5 * mcTTL}, 0), Crux: true},
			{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Sleep(1500 * time.Millisecond)},
		},
	}
}

// lookupIn finds the scenario name in list.
func lookupIn(list []runner.Scenario, name string) (runner.Scenario, error) {
	for _, s := range list {
		if s.Name == name {
			return s, nil
		}
	}
	return runner.Scenario{}, fmt.Errorf("unknown scenario %q (see `check list`)", name)
}

// restartSQL is restart-sql on SQL topology t: the server crashed and
// restarted with its data while the holder works on, under a lease that
// outlives the restart; lost says what a session lock loses.
func restartSQL(t cluster.Topology, lost string) runner.Scenario {
	suffix, server := sqlNames(t)
	return runner.Scenario{
		Name: "restart" + suffix,
		Description: "On one " + server + " server, with a lease of 6 s (longer than a restart; renewed every 2 s by a watchdog): inside " +
			"client 0's second critical section, the server is crashed and restarted 100 ms later with its data: its " +
			"sessions end, so " + lost + ", while a committed row stays (recovered from the log). The holder works on until " +
			"another client is in its critical section, at most 4 s, then writes the stock and releases.",
		Topology: t,
		Workload: runner.Workload{TTL: 6 * time.Second, Work: 10 * time.Millisecond, Duration: 8 * time.Second},
		Failpoints: []failpoint.Point{
			{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Inject(fault.KillNode{KeepData: true}, 100*time.Millisecond), Crux: true},
			{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.SleepUntil(failpoint.CriticalSection, 4*time.Second)},
		},
	}
}

// clockJumpSQL steps the SQL server's own wall clock forward while client
// 0 holds the lock: the clock its NOW() reads, which is what a lock whose
// expiry is kept in the server's time (the unique row) counts its lease
// by. A lock held by a session (GET_LOCK, an advisory lock) or by an open
// transaction keeps no time, and a jump cannot touch it.
func clockJumpSQL(t cluster.Topology) runner.Scenario {
	suffix, server := sqlNames(t)
	return runner.Scenario{
		Name: "clock-jump" + suffix,
		Description: "On one " + server + " server: inside client 0's second critical section, the server's wall clock jumps 2 s " +
			"forward, ten leases (libfaketime in the server, its monotonic clock untouched), as a clock stepped by NTP or an " +
			"operator does, and stays there. The holder works on until another client is in its critical section, at most 1 s. " +
			"A lock whose expiry is the server's NOW() sees its holder's lease run out at once; a lock held by a session keeps no time.",
		Topology: t,
		Workload: runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 2 * time.Second},
		Failpoints: []failpoint.Point{
			{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Inject(fault.ClockJumpServer{Node: 0, By: 10 * ttl}, 0), Crux: true},
			{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.SleepUntil(failpoint.CriticalSection, 5*ttl)},
		},
	}
}
