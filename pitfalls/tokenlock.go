package pitfalls

import (
	"fmt"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/reference"
)

// NewTokenLock builds the correct single-node lock the ladder climbs to,
// without renewal: reference.TokenLock, which the catalogue's broken
// single-node locks build on.
func NewTokenLock(c *harness.Client) harness.Locker { return reference.NewTokenLock(c) }

// NewWatchdogLock builds the token lock that renews its lease while held
// (reference.NewWatchdogLock), the reference lock on one master.
func NewWatchdogLock(c *harness.Client) harness.Locker { return reference.NewWatchdogLock(c) }

// newToken makes a value no other lease of this run uses: the client's ID
// and a counter of its acquires.
func newToken(c *harness.Client, n *int) string {
	*n++
	return fmt.Sprintf("c%d-%d", c.ID(), *n)
}
