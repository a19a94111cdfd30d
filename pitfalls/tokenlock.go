package pitfalls

import (
	"fmt"

	"github.com/locklab/locklab/harness"
)

// NewTokenLock builds the correct single-node lock the ladder climbs to,
// without renewal: harness.TokenLock, which the catalogue's broken
// single-node locks build on.
func NewTokenLock(c *harness.Client) harness.Locker { return harness.NewTokenLock(c) }

// NewWatchdogLock builds the token lock that renews its lease while held
// (harness.NewWatchdogLock), the reference lock on one master.
func NewWatchdogLock(c *harness.Client) harness.Locker { return harness.NewWatchdogLock(c) }

// newToken makes a value no other lease of this run uses: the client's ID
// and a counter of its acquires.
func newToken(c *harness.Client, n *int) string {
	*n++
	return fmt.Sprintf("c%d-%d", c.ID(), *n)
}
