package pitfalls

import (
	"github.com/locklab/locklab/checker"
)

// zookeeperPitfalls is the ZooKeeper half of the consensus family:
// go-zookeeper's Lock recipe, whose nodes Zab replicates, against the two
// faults that beat Redis locks: a paused holder, and a failover.
func zookeeperPitfalls() []Pitfall {
	return []Pitfall{
		{
			ID: "z1", Family: Consensus, Name: "zk-pause", Title: "ZooKeeper: the holder pauses past its session timeout",
			Article: "001 (consensus locks); samuel/go-zookeeper#20 (the Lock never tells its holder the session expired)",
			Wrong: "ZooKeeper's lock is an ephemeral sequential node that lives as long as the holder's session, which the " +
				"holder's client keeps alive with heartbeats. A stop-the-world pause stops the heartbeats too: the ensemble " +
				"expires the session, deletes the node, and the next waiter holds the lock while the paused holder, when it " +
				"wakes, still believes it does (go-zookeeper's Lock has no way to say otherwise) and writes over the next " +
				"holder's work. Zab replicates the node; it cannot make a session wait for a process that stopped.",
			Fix: "Fence the resource with the lock node's creation zxid (Czxid), which grows with every holder, and treat a " +
				"lost session as a lost lock: the resource refuses the stale holder's token, and its release deletes nothing. " +
				"The lock checker still sees the overlap; the stale write is refused, and the resource stays correct.",
			Scenario: "pause-holder-zk",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "zk-lock",
			Fixes:    []Case{{Lock: "zk-fenced", Expected: fencedGets, Kind: checker.Inherent}},
		},
		{
			ID: "z2", Family: Consensus, Name: "zk-failover", Title: "ZooKeeper: the leader dies while a client holds the lock",
			Article: "001 (consensus locks); compare pitfall 10a",
			Wrong: "Nothing goes wrong, and that is the lesson: the leader is killed while a client holds the lock, and unlike a " +
				"Redis failover (pitfall 10a), which promotes a replica that never got the key, ZooKeeper commits the lock node " +
				"on a quorum before Create returns, so whichever server the others elect has it, and the holder's session moves " +
				"to it. The \"broken\" lock passes every checker.",
			Fix:      "None needed: consensus replication is the fix for a failover that loses the lock. It is no fix for a pause (z1).",
			Scenario: "kill-leader-zk",
			Catches: map[string]checker.Verdict{
				checker.CheckLock: checker.OK, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.OK,
			},
			Broken: "zk-lock",
			// The fenced lock passes too: every checker ok.
			Fixes: []Case{{Lock: "zk-fenced"}},
		},
	}
}
