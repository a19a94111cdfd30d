// Package harness is what a lock author touches: the lock contract
// ([Locker], [Lease], [NewLocker]), the [Client] a lock is given, and the
// failpoints that strike a lock at named points of its life ([failpoint.Point],
// [failpoint.Action]). Package runner puts a lock through a scenario with them; the
// faults they inject are package fault's.
//
// Lock code under test sees only [Client]: its ID, its handle to the lock
// service (dialled by the service's package: service/redis's go-redis
// connections, read with redis.Of), its clock and a way to run background
// work. It needs no hook: every command it sends passes the handle's hook
// into [Client.Commands] (a lock program's, the relay of package program:
// [NewRelay]), which knows the lock's [failpoint.Phase]
// (acquire, critical section, release, background) and counts the phase's
// commands, so a scenario can strike before or after the k-th one
// ([BeforeCommand], [AfterCommand]) or right after the command that took the
// key ([failpoint.AfterTook]). A lock may still name exact points of its own with
// [Client.Failpoint].
//
// The correct locks every other lock is measured against are in package
// reference; the servers and the network a client talks to come from
// package cluster.
package harness
