// Package zookeeper is locklab's ZooKeeper lock service: a three-server
// ensemble that replicates every write through Zab, where a lock is an
// ephemeral sequential node that lives as long as its holder's session
// (go-zookeeper's Lock recipe). Service starts the ensemble on any backend
// that can (cluster.LockService, through ensemble.Starter) and opens each
// client's session through its links (harness.Dialer); the reference lock
// (Lock) lives here too, so that no package outside the service, its locks
// and the backends names ZooKeeper's client library.
//
// What sets ZooKeeper apart: a write is committed once a quorum has it,
// so a failover loses no lock; but the recipe never tells its holder that
// its session expired, so a holder paused past its session timeout still
// believes it holds the lock (pitfalls/catalogue_zookeeper.go), which a
// holder that watches its session and fences with its node's Czxid keeps
// out (NewLockFenced). Its servers are JVMs under libfaketime, whose wall
// clock fault.ClockJumpServer moves (Stamp proves it).
package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/service/zookeeper/ensemble"
)

// LockRoot is where the ZooKeeper locks keep their nodes: the lock named
// key is the parent LockRoot+"/"+key, with one ephemeral sequential child
// per waiter or holder.
const LockRoot = "/locklab"

// ErrNoZooKeeper means a run on the zookeeper topology could not start
// ZooKeeper (no Java or no jars, or a backend without ZooKeeper); a suite
// skips such a run. It is ensemble.ErrNoZooKeeper, which the backends
// wrap.
var ErrNoZooKeeper = ensemble.ErrNoZooKeeper

// Set is a running ZooKeeper ensemble, as a backend started it.
type Set = ensemble.Set

// Service is the ZooKeeper lock service: cluster.ZooKeeperServers
// servers, each a lock node.
type Service struct{}

// Pace is the lease and run length of explore's schedules on ZooKeeper
// (service.Paced): a session timeout (the clients' TTL) as long as etcd's
// shortest lease, so that the two consensus services are drawn alike.
func (Service) Pace() (ttl, runFor time.Duration) { return time.Second, 4 * time.Second }

// Name is cluster.ZooKeeper.
func (Service) Name() cluster.Service { return cluster.ZooKeeper }

// Parallel is how many ZooKeeper runs a machine of cpus cores makes at once
// (service.Crowded): one more than its cores. Each run starts three JVMs,
// whose start takes a core's second each. Measured with check explore -lock
// zk-fenced -time 40s on 2 cores, while other tests loaded them: 0 runs at
// 8 at once (load 21, every run cut short), 8.7 a minute at 2, 22 at 3,
// 12 at 4.
func (Service) Parallel(cpus int) int { return cpus + 1 }

// Start starts the ensemble on run, which must be an ensemble.Starter,
// and returns once it has a leader.
func (Service) Start(ctx context.Context, run cluster.RunSession, dir string) (cluster.Deployment, error) {
	starter, ok := run.(ensemble.Starter)
	if !ok {
		return nil, fmt.Errorf("%w: ZooKeeper is not available on the %s backend yet: use -backend local", ErrNoZooKeeper, run.Name())
	}
	set, err := starter.StartZooKeeper(ctx, dir, cluster.ZooKeeperServers)
	if err != nil {
		return nil, err
	}
	return &deployment{set: set}, nil
}

// SetOf is the ensemble cl runs, or nil on another topology: for the
// tests and tools that read ZooKeeper past any link.
func SetOf(cl *cluster.Cluster) Set {
	d, _ := cl.Deployment().(*deployment)
	if d == nil {
		return nil
	}
	return d.set
}

// deployment is a running ensemble of one run. Besides a Deployment, it
// is a cluster.Leader (fault.KillLeader) and a cluster.Stamper
// (fault.ClockJumpServer's proof).
type deployment struct{ set Set }

// Nodes are the servers.
func (d *deployment) Nodes() []cluster.Node { return d.set.Nodes() }

// Stop stops every server.
func (d *deployment) Stop() error { return d.set.Stop() }

// Leader is the index of the server that says it leads, while a quorum
// serves.
func (d *deployment) Leader(ctx context.Context) (int, error) {
	_, i, err := ensemble.Leader(ctx, d.set)
	return i, err
}

// LockState is free when the lock has no node, else held with no
// expiry: the holder's node lives as long as its session, whose time left
// the server does not tell another session.
//
// A server answers reads from its own copy, which may lag the leader's: a
// node a client just made through another server was missing from 1–2% of
// reads on a loaded machine. Sync first brings the admin's server up to
// what the leader had committed when it asked.
func (d *deployment) LockState(ctx context.Context, key string) (cluster.State, error) {
	admin := d.set.Admin()
	if _, err := admin.Sync("/"); err != nil {
		return cluster.Free, fmt.Errorf("catch up with the leader (sync): %w", err)
	}
	parent := LockRoot + "/" + key
	if strings.HasPrefix(key, "/") {
		parent = key // a path the lock's own requests showed (a program's)
	}
	children, _, err := admin.Children(parent)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return cluster.Free, nil
	case err != nil:
		return cluster.Free, fmt.Errorf("read the lock's nodes: %w", err)
	case len(children) == 0:
		return cluster.Free, nil
	}
	return cluster.Unexpiring(), ctx.Err()
}

// Stamp writes an ephemeral znode of the admin's session and reads back
// its mtime, which the leader stamps from its wall clock.
func (d *deployment) Stamp(context.Context) (time.Time, error) {
	admin := d.set.Admin()
	path, err := admin.Create("/locklab-clock-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		return time.Time{}, fmt.Errorf("write a znode: %w", err)
	}
	_, stat, err := admin.Exists(path)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the znode back: %w", err)
	}
	if stat == nil {
		return time.Time{}, fmt.Errorf("read the znode back: %s is gone", path)
	}
	return time.UnixMilli(stat.Mtime), nil
}

// Reset deletes every node but ZooKeeper's own, ephemeral ones of
// sessions still open included (cluster.Resetter): a session whose client
// is gone lives on until its timeout, but holds nothing then, and a node
// deleted here is no longer that session's to delete at its end.
func (d *deployment) Reset(ctx context.Context) error {
	admin := d.set.Admin()
	top, _, err := admin.Children("/")
	if err != nil {
		return fmt.Errorf("list the nodes: %w", err)
	}
	for _, name := range top {
		if name == "zookeeper" {
			continue
		}
		if err := deleteTree(ctx, admin, "/"+name); err != nil {
			return err
		}
	}
	return nil
}

// deleteTree deletes path and every node under it, children first.
func deleteTree(ctx context.Context, admin *zk.Conn, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	children, _, err := admin.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", path, err)
	}
	for _, c := range children {
		if err := deleteTree(ctx, admin, path+"/"+c); err != nil {
			return err
		}
	}
	// A node a session made meanwhile fails this, and the reset with it:
	// the cluster is then not reused.
	if err := admin.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	return nil
}

// Clean reports a node left beside ZooKeeper's own (cluster.Resetter),
// once the admin's server has caught up with the leader.
func (d *deployment) Clean(ctx context.Context) error {
	admin := d.set.Admin()
	if _, err := admin.Sync("/"); err != nil {
		return fmt.Errorf("catch up with the leader (sync): %w", err)
	}
	top, _, err := admin.Children("/")
	if err != nil {
		return fmt.Errorf("list the nodes: %w", err)
	}
	for _, name := range top {
		if name != "zookeeper" {
			return fmt.Errorf("node /%s left", name)
		}
	}
	return ctx.Err()
}
