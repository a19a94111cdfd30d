// Package harness is what a lock author touches: the lock contract ([Locker],
// [Lease], [NewLocker]), the [Client] a lock is given, and the run that puts
// a lock through a [Scenario]: failpoints, faults, the workload (acquire →
// critical section on the inventory → release) and the runner, which records
// a history (package history) and judges it (package check).
//
// Lock code under test sees only [Client]: its ID, its Redis connections, its
// clock, its failpoints and a way to run background work. The servers and the
// network it talks to come from package cluster.
package harness
