// Package harness is what a lock author touches: the lock contract ([Locker],
// [Lease], [NewLocker]), the [Client] a lock is given, and the run that puts
// a lock through a [Scenario]: failpoints, faults, the workload (acquire →
// critical section on the inventory → release) and the runner, which records
// a history (package history) and judges it (package check).
//
// Lock code under test sees only [Client]: its ID, its Redis connections, its
// clock and a way to run background work. It needs no hook: every command it
// sends passes the client's go-redis hook (a lock program's, the relay of
// package program: [NewRelay]), which knows the lock's [Phase]
// (acquire, critical section, release, background) and counts the phase's
// commands, so a scenario can strike before or after the k-th one
// ([BeforeCommand], [AfterCommand]) or right after the command that took the
// key ([AfterTook]). A lock may still name exact points of its own with
// [Client.Failpoint]. When Options.Reference is set, each failing verdict is
// marked own or inherent (check.Kind) by comparing with that correct lock.
// The servers and the network it talks to come from package cluster.
package harness
