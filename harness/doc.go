// Package harness is locklab's engine: it starts a Redis topology, puts every
// client's connections through its own toxiproxy links, drives the workload
// (acquire → critical section on the inventory → release) under faults,
// records what each client saw as a history, and checks that history.
//
// Lock code under test sees only [Client]: its ID, its Redis connections, its
// clock, its failpoints and a way to run background work. It implements
// [Locker] and [Lease]; a [NewLocker] builds one lock per client.
package harness
