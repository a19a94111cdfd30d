package reference

import (
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/service"
)

// For is the correct lock another lock is measured against on
// topology t, and its name in `check list`: the watchdog token lock on one
// master, Redlock on five, the unique-row lock with a watchdog on MariaDB
// and PostgreSQL, etcd's concurrency.Mutex on etcd, go-zookeeper's Lock on ZooKeeper, and the reentrant lock
// where critical sections nest on one master (there is no reentrant
// Redlock). A failure it shows too is inherent to the fault,
// not the lock's own. Run uses it when Options.Reference is nil.
func For(t cluster.Topology, nested bool) (name string, newLocker harness.NewLocker) {
	// Redis's correct lock depends on the topology and on nesting, which
	// its service cannot tell: it is chosen here, before the seam's.
	switch {
	case t == cluster.Redlock:
		return "redlock", NewRedlock
	case t.Service() == cluster.Redis && nested:
		return "reentrant", NewReentrantLock
	case t.Service() == cluster.Redis:
		return "token-watchdog", NewWatchdogLock
	}
	if s := service.For(t); s != nil {
		return s.Reference() // a service behind the seam offers its own
	}
	return "token-watchdog", NewWatchdogLock
}
