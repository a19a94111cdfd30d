// Package scenarios names the experiments locklab puts locks through. Each
// one is a topology, a workload and a fault schedule; failpoints inside the
// lock code time each fault so that it hits on every run, not by luck.
package scenarios

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/runner"
)

// ttl is the lease of the single-node scenarios: short, so that a run that
// waits for expiries still takes seconds.
const ttl = 200 * time.Millisecond

// All lists every scenario, sorted by name.
func All() []runner.Scenario {
	all := []runner.Scenario{
		{
			Name:        "contention",
			Description: "Four clients compete for one lock with short critical sections and no fault at all.",
			Topology:    cluster.Single,
			Workload:    runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond},
		},
		{
			// contention without its cause: a lock that only excludes
			// within one process (pitfall 0) is correct here.
			Name:        "one-client",
			Description: "One client alone runs contention's workload (short critical sections, no fault): the service as a single process, before it is run twice.",
			Topology:    cluster.Single,
			Workload:    runner.Workload{Clients: 1, TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond},
		},
		{
			Name: "crash-after-setnx",
			Description: "Client 0 crashes (connections closed, no cleanup) right after the command of its third successful acquire " +
				"that took the key (its reply said so), before the lock sees the reply or sends anything else.",
			Topology:   cluster.Single,
			Workload:   runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond},
			Failpoints: []failpoint.Point{{Name: failpoint.AfterTook, Client: 0, Skip: 2, Action: failpoint.Crash(), Crux: true}},
		},
		{
			Name:        "crash-holder",
			Description: "Client 0 crashes (connections closed, no cleanup) inside its third critical section, holding the lock.",
			Topology:    cluster.Single,
			Workload:    runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond},
			Failpoints:  []failpoint.Point{{Name: failpoint.CriticalSection, Client: 0, Skip: 2, Action: failpoint.Crash(), Crux: true}},
		},
		{
			Name: "pause-before-del",
			Description: "Client 0 is paused (stop-the-world) in its releases 2 to 5, alternately just before and just after the " +
				"release's first command, each time until its lease (200 ms TTL, 100 ms of work) has expired and another client holds the lock (at most 1 s): " +
				"a DEL that arrives late, and a DEL sent after a check that was true when it ran.",
			Topology:   cluster.Single,
			Workload:   runner.Workload{TTL: ttl, Work: 100 * time.Millisecond, Duration: 2 * time.Second},
			Failpoints: pauseInRelease(4, failpoint.PauseUntil(failpoint.Acquired, time.Second)),
		},
		{
			Name: "slow-work",
			Description: "Client 0's second critical section takes 500 ms, two and a half TTLs (only its worker is slow; " +
				"the rest of the client, a watchdog included, keeps running).",
			Topology:   cluster.Single,
			Workload:   runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond},
			Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Sleep(5 * ttl / 2), Crux: true}},
		},
		{
			Name: "clock-skew",
			Description: "From 300 ms on, client 0's wall clock (Client.Now) runs 1 s ahead for one second; " +
				"Redis and the other clients keep true time. Critical sections take 50 ms.",
			Topology: cluster.Single,
			Workload: runner.Workload{TTL: ttl, Work: 50 * time.Millisecond, Duration: 1500 * time.Millisecond},
			Faults: []runner.ScheduledFault{{At: 300 * time.Millisecond, For: time.Second,
				Fault: fault.ClockSkew{Client: 0, By: time.Second}, Crux: true}},
		},
		{
			Name: "clock-skew-seconds",
			Description: "clock-skew for locks that count in whole seconds (seed 004's PHP lock): a 2 s TTL; from 300 ms on, " +
				"client 0's wall clock runs 3 s ahead, past the TTL, for 1.2 s. Critical sections take 50 ms.",
			Topology: cluster.Single,
			Workload: runner.Workload{TTL: 2 * time.Second, Work: 50 * time.Millisecond, Duration: 2 * time.Second},
			Faults: []runner.ScheduledFault{{At: 300 * time.Millisecond, For: 1200 * time.Millisecond,
				Fault: fault.ClockSkew{Client: 0, By: 3 * time.Second}, Crux: true}},
		},
		{
			Name: "pause-holder",
			Description: "Client 0 is paused (stop-the-world, its watchdog included) for 500 ms inside its second " +
				"critical section, after reading the stock: two and a half TTLs.",
			Topology:   cluster.Single,
			Workload:   runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond},
			Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Pause(5 * ttl / 2), Crux: true}},
		},
		{
			Name:        "nested",
			Description: "Every critical section calls a function that takes the same lock again, as code that nests locked calls does. No fault.",
			Topology:    cluster.Single,
			Workload:    runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond, Nested: true},
		},
	}
	all = append(all, blind()...)
	all = append(all, commit()...)
	all = append(all, failover()...)
	all = append(all, redlock()...)
	sqlNames := []string{"contention", "crash-holder", "slow-work", "pause-holder"}
	all = append(all, onSQL(all, cluster.MariaDBTopology, sqlNames...)...)
	all = append(all, onSQL(all, cluster.PostgresTopology, sqlNames...)...)
	all = append(all, sqlOnly()...)
	all = append(all, sharedPool("pool-sql", 3, "one fewer than the requests that may wait for the lock at once"),
		sharedPool("pool-sql-sized", 5, "sized by HikariCP's rule: threads × (connections a thread holds at once − 1) + 1"))
	all = append(all, busyPool(cluster.MariaDBTopology), busyPool(cluster.PostgresTopology))
	all = append(all, killConnectionPostgres())
	all = append(all, etcd()...)
	all = append(all, zookeeper()...)
	all = append(all, memcachedScenarios()...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// killConnectionPostgres is kill-connection-sql on PostgreSQL, with the
// inventory a row of the same server, as there: the session that held the
// lock is ended by the server (pg_terminate_backend) while its holder
// works on, and a lock whose transaction carries the write loses both.
func killConnectionPostgres() runner.Scenario {
	return runner.Scenario{
		Name: "kill-connection-postgres",
		Description: "On one PostgreSQL server, with the inventory a row of the same server changed in READ COMMITTED transactions: " +
			"in client 0's second critical section, after it read the stock, the server ends client 0's " +
			"sessions (pg_terminate_backend, as an administrator or an idle timeout does); client 0 works on until another client has read " +
			"the stock (at most 300 ms), then writes. Critical sections take 10 ms.",
		Topology: cluster.PostgresTopology,
		Workload: runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond, Resource: runner.PostgresResource},
		Failpoints: []failpoint.Point{
			{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Inject(fault.KillConnection{Client: 0}, time.Millisecond), Crux: true},
			{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.SleepUntil(failpoint.CriticalSection, 300*time.Millisecond)},
		},
	}
}

// busyPool is contention on an SQL topology with one more user of client
// 0's pool, timed so that a lock whose state lives in one connection's
// session takes it on one connection and sends its release on the other,
// on every run (failpoint.HoldConn says how).
func busyPool(t cluster.Topology) runner.Scenario {
	suffix, server := sqlNames(t)
	return runner.Scenario{
		Name: "busy-pool" + suffix,
		Description: "On one " + server + " server, contention's workload (four clients, short critical sections, no fault) with one more user of " +
			"client 0's SQL pool (two connections): from just before its second acquire until it is inside that critical section, another " +
			"part of its process holds the pooled connection the client used last. The acquire runs on the other connection, and the release " +
			"on the first again, as a busy process's pool hands them out.",
		Topology: t,
		Workload: runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond},
		Failpoints: []failpoint.Point{{Name: failpoint.BeforeAcquire, Client: 0, Skip: 1,
			Action: failpoint.HoldConn(failpoint.CriticalSection, 2*time.Second), Crux: true}},
	}
}

// sqlNames are the suffix of the scenarios of SQL topology t and the name
// of its server.
func sqlNames(t cluster.Topology) (suffix, server string) {
	if t == cluster.PostgresTopology {
		return "-postgres", "PostgreSQL"
	}
	return "-sql", "MariaDB"
}

// onSQL is the named scenarios of the single topology played on an SQL
// topology: named with "-sql" on MariaDB (cluster.MariaDBTopology), "-postgres" on
// PostgreSQL; the same workload and faults, the lock a row of one server
// instead of a Redis key. Only scenarios whose faults strike the client,
// its links or its critical sections carry over: faults at Redis commands
// have no commands to strike there.
func onSQL(all []runner.Scenario, t cluster.Topology, names ...string) []runner.Scenario {
	suffix, server := sqlNames(t)
	var out []runner.Scenario
	for _, s := range all {
		if slices.Contains(names, s.Name) && s.Topology == cluster.Single {
			s.Name += suffix
			s.Description = "On one " + server + " server, the lock a row: " + s.Description
			s.Topology = t
			out = append(out, s)
		}
	}
	return out
}

// sqlOnly builds the scenarios only MariaDB has so far: the inventory in
// the lock's server, and the server killing a client's connections.
func sqlOnly() []runner.Scenario {
	return []runner.Scenario{{
		Name: "contention-sql-tx",
		Description: "On one MariaDB server, with the inventory a row of the same server changed in REPEATABLE READ transactions " +
			"(SELECT stock, work, UPDATE stock = read − 1, COMMIT): four clients compete with short critical sections and no fault at all.",
		Topology: cluster.MariaDBTopology,
		Workload: runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond, Resource: runner.MariaDBResource},
	}, {
		Name: "kill-connection-sql",
		Description: "On one MariaDB server, with the inventory a row of the same server changed in REPEATABLE READ transactions: " +
			"in client 0's second critical section, after it read the stock, the server kills client 0's connections to it " +
			"(KILL CONNECTION, as an administrator or a wait_timeout does); client 0 works on until another client has read " +
			"the stock (at most 300 ms), then writes. Critical sections take 10 ms.",
		Topology: cluster.MariaDBTopology,
		Workload: runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond, Resource: runner.MariaDBResource},
		Failpoints: []failpoint.Point{
			// A kill is over at once, as a drop is.
			{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Inject(fault.KillConnection{Client: 0}, time.Millisecond), Crux: true},
			{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.SleepUntil(failpoint.CriticalSection, 300*time.Millisecond)},
		},
	}}
}

// poolWait is how long the statements of the shared-pool scenarios may
// take, a lock wait included (innodb_lock_wait_timeout, whose default is
// 50 s): long past the liveness bound, so that a pool that stalls stays
// stalled while the run looks.
const poolWait = 10 * time.Second

// sharedPool is contention-sql-tx in one service of four request threads
// that share a pool of size connections to the MariaDB server, chosen as
// why says: "pool-sql" has three, one fewer than the threads that may wait
// for the lock at once; "pool-sql-sized" five, as HikariCP's rule for a
// pool that cannot deadlock sizes it (threads × (connections one thread
// holds at once − 1) + 1 = 4 × 1 + 1).
func sharedPool(name string, size int, why string) runner.Scenario {
	return runner.Scenario{
		Name: name,
		Description: fmt.Sprintf("On one MariaDB server, with the inventory a row of the same server: the four clients are the request threads "+
			"of one service and share its pool of %d connections (%s), for the lock and the inventory alike. Short critical sections, "+
			"no fault; a statement, a lock wait included, may take %s.", size, why, poolWait),
		Topology: cluster.MariaDBTopology,
		Workload: runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond, Resource: runner.MariaDBResource,
			Pool: size, Timeout: poolWait},
	}
}

// pauseInRelease strikes client 0's releases 2 to n+1 with a, alternately
// before and after each release's first command. Before it catches a
// release that sends a late DEL; after it catches one that checks the
// owner, then deletes in a second command.
func pauseInRelease(n int, a failpoint.Action) []failpoint.Point {
	var fps []failpoint.Point
	for i := range n {
		name := failpoint.BeforeCommand(failpoint.PhaseRelease, 1)
		if i%2 == 1 {
			name = failpoint.AfterCommand(failpoint.PhaseRelease, 1)
		}
		fps = append(fps, failpoint.Point{Name: name, Client: 0, Skip: 1 + i, Action: a, Crux: true})
	}
	return fps
}

// Lookup finds a scenario by name, among All and Compared.
func Lookup(name string) (runner.Scenario, error) {
	if s, err := lookupIn(All(), name); err == nil {
		return s, nil
	}
	return lookupIn(Compared(), name)
}

// Run puts the lock built by newLocker through the named scenario and returns
// what every checker found. It is how a test checks any lock, a workshop
// attendee's own included.
func Run(ctx context.Context, name string, newLocker harness.NewLocker, opts runner.Options) (*runner.Result, error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return runner.Run(ctx, s, newLocker, opts)
}

// redlockTTL is the lease of the Redlock scenarios: long enough for five
// round trips through the links and a 100 ms critical section.
const redlockTTL = 300 * time.Millisecond

// redlock builds the Redlock scenarios. In those where a node fails, client 0
// is cut off from nodes 3 and 4 for the whole run, so its holds sit on nodes
// 0–2 only, and the failpoint strikes node 2 while client 0 is inside its
// critical section.
func redlock() []runner.Scenario {
	work := runner.Workload{TTL: redlockTTL, Work: 100 * time.Millisecond, Duration: 2 * time.Second}
	cutOff := []runner.ScheduledFault{{For: failpoint.WholeRun, Fault: fault.Partition{Client: 0, Nodes: []int{3, 4}}}}
	strike := func(a failpoint.Action) []failpoint.Point {
		return []failpoint.Point{{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Times: 2, Action: a, Crux: true}}
	}
	const setting = "Redlock over five masters; client 0 reaches only nodes 0-2 (partitioned from 3 and 4). "
	return []runner.Scenario{
		{
			Name:        "redlock-restart",
			Description: setting + "While client 0 holds the lock, node 2 is killed (SIGKILL) and restarted at once, empty (no persistence).",
			Topology:    cluster.Redlock, Workload: work, Faults: cutOff,
			Failpoints: strike(failpoint.Inject(fault.KillNode{Node: 2}, 0)),
		},
		{
			Name:        "redlock-restart-delayed",
			Description: setting + "While client 0 holds the lock, node 2 is killed (SIGKILL) and restarted empty only after a TTL and 100 ms.",
			Topology:    cluster.Redlock, Workload: work, Faults: cutOff,
			Failpoints: strike(failpoint.Inject(fault.KillNode{Node: 2}, redlockTTL+100*time.Millisecond)),
		},
		{
			Name:        "redlock-restart-fsync",
			Description: setting + "Nodes persist every write (appendfsync always). While client 0 holds the lock, node 2 is killed and restarted at once with its data.",
			Topology:    cluster.Redlock, Persistence: cluster.AOFAlways, Workload: work, Faults: cutOff,
			Failpoints: strike(failpoint.Inject(fault.KillNode{Node: 2, KeepData: true}, 0)),
		},
		{
			Name:        "redlock-clock-jump",
			Description: setting + "While client 0 holds the lock, node 2's clock jumps a TTL forward (simulated: every TTL on node 2 is shortened by it).",
			Topology:    cluster.Redlock, Workload: work, Faults: cutOff,
			Failpoints: strike(failpoint.Inject(fault.ClockJump{Node: 2, By: redlockTTL}, 0)),
		},
		{
			Name: "redlock-slow-nodes",
			Description: "Redlock over five masters, two clients. Three times, as soon as one of client 0's acquires has taken the key on a node, nodes 3 and 4 " +
				"are paused (SIGSTOP) for 400 ms, longer than the 300 ms TTL. A Redlock that waits for them and ignores the time its " +
				"acquire took holds a lock whose keys have already expired.",
			Topology: cluster.Redlock,
			// Two clients, so that client 0 often wins the lock and the
			// pause strikes an acquire that gets its majority.
			Workload: runner.Workload{Clients: 2, TTL: redlockTTL, Work: 100 * time.Millisecond, Duration: 2 * time.Second},
			Failpoints: []failpoint.Point{
				{Name: failpoint.AfterTook, Client: 0, Times: 3, Action: failpoint.Inject(fault.PauseNode{Node: 3}, 400*time.Millisecond), Crux: true},
				{Name: failpoint.AfterTook, Client: 0, Times: 3, Action: failpoint.Inject(fault.PauseNode{Node: 4}, 400*time.Millisecond), Crux: true},
			},
		},
		{
			Name:        "redlock-pause",
			Description: "Redlock over five masters. Client 0 is paused (stop-the-world) inside its second critical section for two TTLs, longer than any validity.",
			Topology:    cluster.Redlock,
			Workload:    runner.Workload{TTL: redlockTTL, Work: 10 * time.Millisecond, Duration: 2 * time.Second},
			Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Client: 0, Skip: 1,
				Action: failpoint.Pause(2 * redlockTTL), Crux: true}},
		},
	}
}

// blind builds the scenarios that make a lock's hidden error paths run
// without any hook in it: replies lost on the way back, and a holder cut off
// past its lease while its background work keeps trying.
func blind() []runner.Scenario {
	// Commands give up after 500 ms, so a lost reply costs half a second
	// and the lease (200 ms) is gone by the time the client learns nothing.
	work := runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond, Timeout: 500 * time.Millisecond}
	return []runner.Scenario{
		{
			Name: "lost-release-reply",
			Description: "Twice, the reply to the first command of client 0's release is dropped: the command runs on Redis, " +
				"the client waits its 500 ms timeout and sees a timeout, by which time its lease is gone and another client may hold the lock. " +
				"A lock that then falls back to a plain DEL frees that client's lock: a second release command waits until another client " +
				"has just taken the lock (at most 300 ms), so that it strikes a holder, not a free key.",
			Topology: cluster.Single, Workload: work,
			Failpoints: []failpoint.Point{
				{Name: failpoint.AfterCommand(failpoint.PhaseRelease, 1), Client: 0, Skip: 1, Times: 2, Action: failpoint.DropReply()},
				// Only a lock with a fallback sends a second release command.
				{Name: failpoint.BeforeCommand(failpoint.PhaseRelease, 2), Client: 0, Times: 2, Optional: true,
					Action: failpoint.SleepUntil(failpoint.Acquired, 300*time.Millisecond)},
			},
		},
		{
			Name: "lost-acquire-reply",
			Description: "Four times, the reply to the first command of one of client 0's acquires is dropped: the command runs on Redis " +
				"(and, under contention, is mostly refused), the client waits its 500 ms timeout and sees a timeout. " +
				"A lock that takes a timeout for success enters while another client holds the lock.",
			Topology: cluster.Single, Workload: work,
			Failpoints: []failpoint.Point{{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 0, Skip: 2, Times: 4,
				Action: failpoint.DropReply()}},
		},
		{
			Name: "holder-cut-off",
			Description: "Right after its second acquire, client 0 is cut off from the lock node (connections reset and refused) for 600 ms, " +
				"three TTLs: its critical section (10 ms) ends, its release and any renewal cannot reach Redis, its lease expires and " +
				"another client takes the lock; then the cut heals while anything still running in client 0, such as a watchdog, retries.",
			Topology: cluster.Single, Workload: work,
			Failpoints: []failpoint.Point{{Name: failpoint.Acquired, Client: 0, Skip: 1,
				Action: failpoint.Inject(fault.Partition{Client: 0}, 3*ttl)}},
		},
		{
			Name: "dropped-connection",
			Description: "Right after each of its second to fourth acquires, client 0's connections to the lock node are closed " +
				"(toxiproxy drops them; new ones succeed at once), as a NAT flush or a load balancer's restart does: its renewals and " +
				"its release must dial again. A dropped connection is not a lost lock: a correct lock is not disturbed.",
			Topology: cluster.Single, Workload: work,
			// A drop is over at once: a span of a millisecond keeps its
			// record from standing for a stall it did not cause.
			Failpoints: []failpoint.Point{{Name: failpoint.Acquired, Client: 0, Skip: 1, Times: 3,
				Action: failpoint.Inject(fault.DropConnection{Client: 0}, time.Millisecond), Crux: true}},
		},
	}
}

// commit builds the two transaction scenarios of pitfall 8: the same slow
// COMMIT, with the lock released before it or after it.
func commit() []runner.Scenario {
	// The COMMIT is slow until another client has read the stock in its own
	// critical section, at most 300 ms: with the lock released first that
	// is soon, with it held it is the whole 300 ms.
	slow := []failpoint.Point{{Name: failpoint.BeforeCommit, Client: 0, Skip: 1, Times: 3,
		Action: failpoint.SleepUntil(failpoint.CriticalSection, 300*time.Millisecond), Crux: true}}
	work := func(releaseFirst bool) runner.Workload {
		return runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond,
			Resource: runner.MariaDBResource, ReleaseBeforeCommit: releaseFirst}
	}
	const setting = "The inventory is a MariaDB row; each critical section is one REPEATABLE READ transaction " +
		"(SELECT stock, UPDATE stock = read − 1). Three times, client 0's COMMIT is slow: it waits until another client has read the stock, at most 300 ms. "
	return []runner.Scenario{
		{
			Name:        "unlock-before-commit",
			Description: setting + "The lock is released before COMMIT, as a lock inside a @Transactional method is.",
			Topology:    cluster.Single, Workload: work(true), Failpoints: slow,
		},
		{
			Name:        "commit-before-unlock",
			Description: setting + "The lock is released after COMMIT.",
			Topology:    cluster.Single, Workload: work(false), Failpoints: slow,
		},
	}
}

// failoverStory is the shortest workload in which client 0 reliably gets to
// its third acquire with time left for the other clients to take the lock
// from the promoted replica; shorter runs stopped before the second holder
// came and passed the broken lock.
const failoverStory = 5 * time.Second

// failoverTTL outlives the failover: Sentinel takes about 2 s (1.5 s of
// down-after, then a vote) and the watchdog last renewed at most a third of
// a TTL before the kill, so client 0's lease is still valid when another
// client asks the promoted replica. An overlap then comes from the key the
// replica lacks, not from a lease that ran out while nobody could renew it.
const failoverTTL = 6 * time.Second

// failover builds the Sentinel scenarios of pitfall 10. Client 0's third
// cycle cuts replication just before it asks for the lock (when cut is not
// empty), so its lock is written on the master only; inside that critical
// section the master is killed and the section lasts until Sentinel has
// promoted a replica and another client is in its critical section, or 3 s.
func failover() []runner.Scenario {
	work := runner.Workload{TTL: failoverTTL, Work: 200 * time.Millisecond, Duration: 6 * time.Second}
	cycle := func(cut []int) []failpoint.Point {
		var fps []failpoint.Point
		if len(cut) > 0 {
			fps = append(fps, failpoint.Point{Name: failpoint.BeforeAcquire, Client: 0, Skip: 2,
				Action: failpoint.Inject(fault.CutReplication{Replicas: cut}, failpoint.WholeRun)})
		}
		return append(fps,
			// A lock that refuses to be held without a replica never gets
			// this far, so these two may not fire; the run then says why.
			failpoint.Point{Name: failpoint.CriticalSection, Client: 0, Skip: 2, Optional: true, Crux: true,
				Action: failpoint.Inject(fault.KillMaster{}, 500*time.Millisecond)},
			// The section goes on until the promoted master has handed the
			// lock to someone else and that client has read the stock,
			// however long the replicas take to resync. That can take a
			// lease: the replica may keep the key of the client that held
			// the lock when replication was cut, whose release never
			// reached it, until that key's TTL runs out. It runs out
			// before client 0's own lease, taken after the cut.
			failpoint.Point{Name: failpoint.CriticalSection, Client: 0, Skip: 2, Optional: true,
				Action: failpoint.SleepUntil(failpoint.CriticalSection, failoverTTL)})
	}
	const setting = "A master, two replicas (data nodes 1 and 2) and three Sentinels; clients reach the master through Sentinel. " +
		"The lease (6 s, renewed every 2 s by a watchdog) outlives the failover (about 2 s), so no lease runs out while the master is down. "
	const kill = "inside client 0's third critical section the master is killed (SIGKILL), Sentinel promotes a replica, " +
		"and the section goes on until another client is in its critical section (at most 6 s: a key the promoted replica kept " +
		"from the holder before the cut blocks everyone until its TTL runs out); " +
		"the old master comes back empty 500 ms after the promotion."
	return []runner.Scenario{
		{
			Name:        "failover",
			Description: setting + "Before client 0's third acquire, replication to both replicas is cut; " + kill,
			Topology:    cluster.Replicated, Workload: work, MinDuration: failoverStory,
			Failpoints: cycle([]int{1, 2}),
		},
		{
			Name:        "failover-replicated",
			Description: setting + "Replication works: " + kill + " The promoted replica has the key, so nobody else gets in.",
			Topology:    cluster.Replicated, Workload: work, MinDuration: failoverStory,
			Failpoints: cycle(nil),
		},
		{
			Name: "failover-wait",
			Description: setting + "Data node 2 is Sentinel's preferred replica (replica-priority 1). Before client 0's third acquire, " +
				"replication to data node 2 only is cut, so data node 1 acknowledges a WAIT; " + kill + " Sentinel picks data node 2, " +
				"by priority, though it never had the lock.",
			Topology: cluster.Replicated, Workload: work, MinDuration: failoverStory,
			Faults:     []runner.ScheduledFault{{For: failpoint.WholeRun, Fault: fault.PreferReplica{Node: 2}}},
			Failpoints: cycle([]int{2}),
		},
	}
}
