package broken

import (
	"fmt"

	"github.com/locklab/locklab/harness"
)

// newToken makes a value no other lease of this run uses: the client's ID
// and a counter of its acquires.
func newToken(c *harness.Client, n *int) string {
	*n++
	return fmt.Sprintf("c%d-%d", c.ID(), *n)
}
