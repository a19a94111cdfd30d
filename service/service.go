// Package service lists the lock services that plug into locklab through
// one seam: each is a package of its own (service/etcd, service/zookeeper,
// service/memcached, service/sqldb's MariaDB and Postgres, service/redis) that starts its deployment on any backend (cluster.LockService), dials
// each client's handle (harness.Dialer) and offers its correct lock. The runner starts a
// topology's service from here; adding a service is its package and one
// line in All.
package service

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/service/etcd"
	"github.com/locklab/locklab/service/memcached"
	"github.com/locklab/locklab/service/redis"
	"github.com/locklab/locklab/service/sqldb"
	"github.com/locklab/locklab/service/zookeeper"
)

// Service is a lock service behind the seam.
type Service interface {
	cluster.LockService
	harness.Dialer
	// Reference is the service's correct lock, which a failing lock is
	// measured against, and its name in `check list`.
	Reference() (name string, newLocker harness.NewLocker)
	// Source is the service package's Go files, so that a workshop page
	// can quote a lock written for it from its own code.
	Source() fs.FS
}

// Crowded is a Service whose runs cost the machine more than others' (a
// ZooKeeper run starts three JVMs): it says how many of its runs a machine
// of cpus cores makes at once, where the others make four a core.
type Crowded interface {
	Parallel(cpus int) int
}

// Parallel is how many runs on topology t a machine of cpus cores makes at
// once, unless told: four a core, or fewer for a Crowded service.
func Parallel(t cluster.Topology, cpus int) int {
	if c, ok := For(t).(Crowded); ok {
		return max(1, c.Parallel(cpus))
	}
	return 4 * cpus
}

// Paced is a Service whose leases explore draws longer than Redis's 200 ms
// (its runs of 1.5 s with them): the lease and the run's length of its
// schedules.
type Paced interface {
	Pace() (ttl, runFor time.Duration)
}

// Pooler is a Service whose clients can be the request threads of one
// service process that share one pool of connections, smaller than the
// requests that may wait for the lock at once (runner's Workload.Pool,
// the comparison's small-pool column). A service whose client multiplexes
// every request on one connection (etcd's gRPC, ZooKeeper's session) has
// no such pool, and is no Pooler.
type Pooler interface {
	// OpenSharedPool opens the pool on cl's deployment: size connections,
	// each request, the wait for a connection included, bounded by
	// timeout. Each client joined with it (harness.ClientOptions.Pool)
	// uses it in place of a handle of its own; its opener closes it once
	// every such client is closed.
	OpenSharedPool(ctx context.Context, cl *cluster.Cluster, size int, timeout time.Duration) (harness.Handle, error)
}

// Shares reports whether topology t's clients can share one pool
// (Pooler).
func Shares(t cluster.Topology) bool {
	_, ok := For(t).(Pooler)
	return ok
}

// OpenSharedPool opens the pool that cl's clients share (Pooler), or
// fails on a topology whose service has none.
func OpenSharedPool(ctx context.Context, cl *cluster.Cluster, size int, timeout time.Duration) (harness.Handle, error) {
	p, ok := For(cl.Topology()).(Pooler)
	if !ok {
		return nil, fmt.Errorf("shared pool: topology %s's clients have no pool to share", cl.Topology())
	}
	return p.OpenSharedPool(ctx, cl, size, timeout)
}

// All lists the services behind the seam.
func All() []Service {
	return []Service{redis.Service{}, etcd.Service{}, zookeeper.Service{}, memcached.Service{}, sqldb.MariaDB{}, sqldb.Postgres{}}
}

// For is the service of topology t when it is behind the seam, or nil.
func For(t cluster.Topology) Service {
	for _, s := range All() {
		if s.Name() == t.Service() {
			return s
		}
	}
	return nil
}

// LockService is the lock service that starts topology t's deployment
// (cluster.Config.Service): For(t). It is nil on the topologies
// cluster.Start starts itself.
func LockService(t cluster.Topology) cluster.LockService {
	if s := For(t); s != nil {
		return s
	}
	return nil
}

// LockWatcher is a cluster.Deployment whose servers tell a watcher of each
// change to a lock's nodes or keys as it happens (ZooKeeper's watches,
// etcd's Watch): the run records them as server events
// (history.KindServer), the lock's own side of what let a second holder
// in (check/cause).
type LockWatcher interface {
	// WatchLock watches the lock named key from a session or client of
	// its own, past every client's link, so that no fault strikes it and
	// the run goes as it would unwatched, recording each change in h. It
	// returns once it watches. stop reads the lock's nodes once more,
	// records what the watch had not told yet, and returns once nothing
	// more will be recorded; ctx's end stops it too.
	WatchLock(ctx context.Context, key string, h *history.Recorder) (stop func(), err error)
}

// WatchLock starts the watcher of the lock named key on d, when d is a
// LockWatcher, before the workload starts; stop drains it once the
// workload has stopped. A watcher that cannot start records nothing, and
// the run goes on without its events: they explain a run, never judge it.
func WatchLock(ctx context.Context, d cluster.Deployment, h *history.Recorder, key string) (stop func()) {
	if w, ok := d.(LockWatcher); ok {
		if stop, err := w.WatchLock(ctx, key, h); err == nil {
			return stop
		}
	}
	return func() {}
}
