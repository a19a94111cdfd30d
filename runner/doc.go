// Package runner puts a lock through a [Scenario]: it starts the cluster,
// arms the failpoints, injects the scheduled faults, runs the workload
// (acquire → critical section on the inventory → release) on every client,
// probes liveness, records the history (package history) and judges it
// (package checker).
//
// [Run] returns the result of every run that ran, a run that did not happen
// as written included (its verdicts unknown, Result.Spoiled saying
// why); an error means the run could not run. Each failing verdict no
// history explains is marked own or inherent (checker.Kind) by putting a
// correct lock of the same kind through the same scenario: Options.Reference,
// by default the reference lock of the scenario's topology (reference.For),
// or the user's own bug-free twin of their lock.
package runner
