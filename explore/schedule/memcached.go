package schedule

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
)

// The kinds drawn on memcached alone (evict, kill-memcached) are in
// kinds.go's list.

// evict fills the server's memory while a client holds the lock until the
// server evicts the lock's item, and lets the holder work on a little.
func (d *drawer) evict() Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	work := d.between(100*time.Millisecond, d.ttl/2)
	f := fault.Evict{}
	return Fault{What: fmt.Sprintf("while %s holds the lock (%s): %s; the holder works %s more", who(c), hits(c, skip, 1), f, work),
		Failpoints: []failpoint.Point{
			d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Inject(f, 0)),
			d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Sleep(work)),
		}}
}

// killMemcached kills the server while a client holds the lock and
// restarts it, at once or after a lease; it comes back empty, since
// memcached keeps nothing on disk.
func (d *drawer) killMemcached() Fault { return d.killWhileHeld(fault.KillNode{}) }
