package pitfalls

import "github.com/locklab/locklab/harness"

// NewReentrantLock builds the lock seed 003 ends with, a hash of owner →
// hold count with a watchdog (harness.ReentrantLock); one client is one
// owner.
func NewReentrantLock(c *harness.Client) harness.Locker { return harness.NewReentrantLock(c) }
