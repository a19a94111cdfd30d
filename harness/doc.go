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
// [Client.Failpoint].
//
// [Run] returns the result of every run that ran, a run that did not happen
// as written included (its verdicts unknown, Result.NotExercised saying
// why); an error means the run could not run. Each failing verdict no
// history explains is marked own or inherent (check.Kind) by putting a
// correct lock of the same kind through the same scenario: Options.Reference,
// by default the reference lock of the scenario's topology ([Reference]:
// [TokenLock] with its watchdog, [ReentrantLock], [Redlock]), or the user's
// own bug-free twin of their lock.
// The servers and the network it talks to come from package cluster.
package harness
