package pitfalls

import (
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/reference"
)

// NewReentrantLock builds the lock seed 003 ends with, a hash of owner →
// hold count with a watchdog (reference.ReentrantLock); one client is one
// owner.
func NewReentrantLock(c *harness.Client) harness.Locker { return reference.NewReentrantLock(c) }
