package pitfalls

import (
	"github.com/locklab/locklab/checker"
)

// consensus is the consensus family of the catalogue: etcd's
// concurrency.Mutex, whose key Raft replicates, against the two faults
// that beat Redis locks: a paused holder, and a failover.
func consensus() []Pitfall {
	return []Pitfall{
		{
			ID: "e1", Family: Consensus, Name: "etcd-pause", Title: "etcd: the holder pauses past its lease",
			Article: "001 (consensus locks); Jepsen, etcd 3.4.3 (etcd-io/etcd#11456)",
			Wrong: "etcd's lock is a key attached to a lease that the holder's client keeps alive. A stop-the-world pause stops " +
				"the keep-alives too: etcd revokes the lease, deletes the key, and the next waiter holds the lock while the paused " +
				"holder, when it wakes, still believes it does and writes over the next holder's work. Raft replicates the key; " +
				"it cannot make a lease wait for a process that stopped.",
			Fix: "Guard the protected write by the lock itself: the stock is an etcd key, written in a transaction " +
				"If(mutex.IsOwner()).Then(Put(stock)), which commits only while the holder's lock key is still the one that " +
				"took the lock. The lock checker still sees the overlap; the stale write is refused, and the resource stays correct.",
			Scenario: "pause-holder-etcd",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "etcd-mutex",
			Fixes:    []Case{{Lock: "etcd-mutex-guarded", Expected: fencedGets, Kind: checker.Inherent}},
		},
		{
			ID: "e2", Family: Consensus, Name: "etcd-failover", Title: "etcd: the leader dies while a client holds the lock",
			Article: "001 (consensus locks); compare pitfall 10a",
			Wrong: "Nothing goes wrong, and that is the lesson: the leader is killed while a client holds the lock, and unlike a " +
				"Redis failover (pitfall 10a), which promotes a replica that never got the key, etcd commits the lock key on a " +
				"majority before Lock returns, so whichever member the others elect has it. The \"broken\" lock passes every checker.",
			Fix:      "None needed: consensus replication is the fix for a failover that loses the lock. It is no fix for a pause (e1).",
			Scenario: "kill-leader-etcd",
			Catches: map[string]checker.Verdict{
				checker.CheckLock: checker.OK, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.OK,
			},
			Broken: "etcd-mutex",
		},
	}
}
