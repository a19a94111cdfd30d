// Package etcd is locklab's etcd lock service: a three-member etcd cluster
// that replicates every write through Raft, where a lock is a key attached
// to a lease (concurrency.Mutex). Service starts the cluster on any
// backend that can (cluster.LockService, through members.Starter) and
// dials each client's etcd client through its links (harness.Dialer); the
// reference lock (Mutex) and the etcd resource's stock live here too, so
// that no package outside the service, its locks and the backends names
// etcd's client library.
//
// What sets etcd apart: a write is committed once a majority has it, so a
// failover loses no lock (compare Redis's pitfall 10); but a holder paused
// past its lease, which then expires, still believes it holds the lock
// (pitfalls/catalogue_etcd.go), which a write guarded by the lock key in
// one transaction (Guarded) keeps out.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/service/etcd/members"
)

// KeyPrefix is where the etcd locks keep their keys: the lock named key
// lives under KeyPrefix+key+"/", one key per waiter or holder.
const KeyPrefix = "/locklab/"

// StockKey is the etcd resource's stock (runner.EtcdResource): the
// inventory as a key of the lock service itself, so that a write can be
// guarded by the lock key in one transaction.
const StockKey = "/locklab-inventory/stock"

// Lease is the lease an etcd lock asks for when its lease is to last ttl:
// ttl rounded up to whole seconds, the unit of etcd's leases, and one
// second at least.
func Lease(ttl time.Duration) time.Duration {
	return max(time.Second, (ttl+time.Second-1)/time.Second*time.Second)
}

// ErrNoEtcd means a run on the etcd topology could not start etcd (no
// binary, or a backend without etcd); a suite skips such a run. It is
// members.ErrNoEtcd, which the backends wrap.
var ErrNoEtcd = members.ErrNoEtcd

// Set is a running etcd cluster, as a backend started it.
type Set = members.Set

// Service is the etcd lock service: cluster.EtcdMembers members, each a
// lock node.
type Service struct{}

// Pace is the lease and run length of explore's schedules on etcd
// (service.Paced): etcd's leases count in whole seconds, one the shortest
// its Raft timing grants, so leases and runs are longer than on Redis.
func (Service) Pace() (ttl, runFor time.Duration) { return time.Second, 4 * time.Second }

// Parallel is how many etcd runs a machine of cpus cores makes at once
// (service.Crowded): two a core. Each run starts three members, which
// fsync every commit and elect a leader on a timer: at four a core their
// heartbeats ran late and elections repeated, and explore -lock
// etcd-mutex-guarded -time 30s made 16 runs a minute; at two a core, 40.
func (Service) Parallel(cpus int) int { return 2 * cpus }

// Name is cluster.Etcd.
func (Service) Name() cluster.Service { return cluster.Etcd }

// Start starts the etcd cluster on run, which must be a members.Starter,
// and returns once it has a leader.
func (Service) Start(ctx context.Context, run cluster.RunSession, dir string) (cluster.Deployment, error) {
	starter, ok := run.(members.Starter)
	if !ok {
		return nil, fmt.Errorf("%w: etcd is not available on the %s backend yet: use -backend local", ErrNoEtcd, run.Name())
	}
	set, err := starter.StartEtcd(ctx, dir, cluster.EtcdMembers)
	if err != nil {
		return nil, err
	}
	return &deployment{set: set}, nil
}

// SetOf is the etcd cluster cl runs, or nil on another topology: for the
// tests and tools that read etcd past any link.
func SetOf(cl *cluster.Cluster) Set {
	d, _ := cl.Deployment().(*deployment)
	if d == nil {
		return nil
	}
	return d.set
}

// deployment is a running etcd cluster of one run. Besides a Deployment,
// it is a cluster.Leader (fault.KillLeader) and a cluster.Stock (the etcd
// resource).
type deployment struct{ set Set }

// Nodes are the members.
func (d *deployment) Nodes() []cluster.Node { return d.set.Nodes() }

// Stop stops every member.
func (d *deployment) Stop() error { return d.set.Stop() }

// Leader is the index of the member that leads now, as a majority of the
// members that answer say.
func (d *deployment) Leader(ctx context.Context) (int, error) {
	_, i, err := members.Leader(ctx, d.set)
	return i, err
}

// LockState is the lease time left of the oldest key under the lock's
// prefix, which is the holder's.
func (d *deployment) LockState(ctx context.Context, key string) (cluster.State, error) {
	admin := d.set.Admin()
	prefix := KeyPrefix + key + "/"
	if strings.HasPrefix(key, "/") {
		prefix = key + "/" // a key the lock's own requests showed (a program's)
	}
	resp, err := admin.Get(ctx, prefix, clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend), clientv3.WithLimit(1))
	if err != nil {
		return cluster.Free, fmt.Errorf("read the lock's keys: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return cluster.Free, nil
	}
	lease := resp.Kvs[0].Lease
	if lease == 0 {
		return cluster.Unexpiring(), nil
	}
	ttl, err := admin.TimeToLive(ctx, clientv3.LeaseID(lease))
	if err != nil {
		return cluster.Free, fmt.Errorf("read the lock's lease: %w", err)
	}
	if ttl.TTL < 0 {
		return cluster.Free, nil // the lease expired: the key goes with it
	}
	// In whole seconds, rounded down: a key in its last second reads 0.
	return cluster.Until(time.Duration(ttl.TTL) * time.Second), nil
}

// SetStock puts the starting stock in StockKey, past any link.
func (d *deployment) SetStock(ctx context.Context, stock int64) error {
	_, err := d.set.Admin().Put(ctx, StockKey, strconv.FormatInt(stock, 10))
	return err
}

// ReadStock reads what is left of the stock, past any link.
func (d *deployment) ReadStock(ctx context.Context) (int64, error) {
	return readStock(ctx, d.set.Admin())
}

// readStock reads StockKey with cli.
func readStock(ctx context.Context, cli *clientv3.Client) (int64, error) {
	resp, err := cli.Get(ctx, StockKey)
	if err != nil {
		return 0, fmt.Errorf("read the stock: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return 0, errors.New("read the stock: no stock key")
	}
	return strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
}

// Reset revokes every lease, the keys on them with it, and deletes every
// key left (cluster.Resetter): the lock's, the stock, a program's own.
func (d *deployment) Reset(ctx context.Context) error {
	admin := d.set.Admin()
	leases, err := admin.Leases(ctx)
	if err != nil {
		return fmt.Errorf("list the leases: %w", err)
	}
	for _, l := range leases.Leases {
		if _, err := admin.Revoke(ctx, l.ID); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return fmt.Errorf("revoke lease %x: %w", l.ID, err)
		}
	}
	if _, err := admin.Delete(ctx, "\x00", clientv3.WithFromKey()); err != nil {
		return fmt.Errorf("delete the keys: %w", err)
	}
	return nil
}

// Clean reports a key or a lease left (cluster.Resetter), as the leader
// sees it: a linearizable read.
func (d *deployment) Clean(ctx context.Context) error {
	admin := d.set.Admin()
	keys, err := admin.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("count the keys: %w", err)
	}
	if keys.Count > 0 {
		return fmt.Errorf("%d keys left", keys.Count)
	}
	leases, err := admin.Leases(ctx)
	if err != nil {
		return fmt.Errorf("list the leases: %w", err)
	}
	if n := len(leases.Leases); n > 0 {
		return fmt.Errorf("%d leases left", n)
	}
	return nil
}
