// Package reference holds the correct locks every other lock is measured
// against: [TokenLock] with its watchdog on one master, [ReentrantLock]
// where critical sections nest, and [Redlock] on five masters. A failure a
// lock shares with the reference lock of its topology ([For]) is inherent
// to the fault, not the lock's own; package runner makes that comparison.
package reference
