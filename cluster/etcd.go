package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Etcd is the lock service of the etcd topology: a three-member etcd
// cluster that replicates every write through Raft.
const Etcd Service = "etcd"

// EtcdTopology is three etcd members, each a lock node: a lock is a key
// attached to a lease (concurrency.Mutex), and a write is committed once a
// majority has it, so a failover loses no lock (compare Redis's pitfall 10).
const EtcdTopology Topology = "etcd"

// EtcdMembers is how many members the etcd topology starts: the smallest
// cluster that survives the loss of one.
const EtcdMembers = 3

// EtcdKeyPrefix is where the etcd locks keep their keys: the lock named
// key lives under EtcdKeyPrefix+key+"/", one key per waiter or holder.
const EtcdKeyPrefix = "/locklab/"

// EtcdStockKey is the etcd resource's stock: the inventory as a key of the
// lock service itself, so that a write can be guarded by the lock key in
// one transaction.
const EtcdStockKey = "/locklab-inventory/stock"

// EtcdLease is the lease an etcd lock asks for when its lease is to last
// ttl: ttl rounded up to whole seconds, the unit of etcd's leases, and one
// second at least.
func EtcdLease(ttl time.Duration) time.Duration {
	return max(time.Second, (ttl+time.Second-1)/time.Second*time.Second)
}

// ErrNoEtcd means a run on the etcd topology could not start etcd: no
// binary (cluster/local/etcd: Path), or a backend without etcd. A suite skips such a
// run, as one that lacks redis-server.
var ErrNoEtcd = errors.New("etcd not found")

// EtcdSet is a running etcd cluster, however its backend runs it.
type EtcdSet interface {
	// Nodes are its members, in the order of Endpoints; each a Node whose
	// Admin is nil (it speaks no Redis).
	Nodes() []Node
	// Endpoints are the members' client addresses (host:port), which stay
	// the same across restarts.
	Endpoints() []string
	// Admin is a client of every member, past any link, for the harness's
	// own use (setup, the leader, the lock's state).
	Admin() *clientv3.Client
	// Stop stops every member and removes their files; it may be called
	// twice.
	Stop() error
}

// EtcdStarter is a RunSession that can start an etcd cluster (both
// backends can). It is an interface of its own, not a method of
// RunSession, so that a backend without etcd needs no change: its runs on
// the etcd topology fail at start, naming what is missing.
type EtcdStarter interface {
	// StartEtcd starts an etcd cluster of n members whose files live under
	// dir and returns once it has a leader.
	StartEtcd(ctx context.Context, dir string, n int) (EtcdSet, error)
}

// startEtcd starts the etcd cluster of the etcd topology on run.
func (c *Cluster) startEtcd(ctx context.Context, run RunSession) error {
	starter, ok := run.(EtcdStarter)
	if !ok {
		return fmt.Errorf("%w: etcd is not available on the %s backend yet: use -backend local", ErrNoEtcd, run.Name())
	}
	set, err := starter.StartEtcd(ctx, c.dir.Path(), EtcdMembers)
	if err != nil {
		return err
	}
	c.etcd = set
	c.masters = set.Nodes()
	return nil
}

// EtcdCluster is the etcd cluster of the etcd topology, or nil.
func (c *Cluster) EtcdCluster() EtcdSet { return c.etcd }

// EtcdLeader is the member that leads the etcd cluster now, as a majority
// of the members that answer say, and its index in LockNodes.
func (c *Cluster) EtcdLeader(ctx context.Context) (Node, int, error) {
	if c.etcd == nil {
		return nil, -1, fmt.Errorf("topology %s has no etcd cluster", c.topology)
	}
	return EtcdLeader(ctx, c.etcd)
}

// EtcdLeader is set's leader now, as a majority of its members say, and
// its index in set.Nodes().
func EtcdLeader(ctx context.Context, set EtcdSet) (Node, int, error) {
	votes := map[uint64]int{}
	ids := map[uint64]int{} // member ID → index
	var errs []string
	for i, ep := range set.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := set.Admin().Status(sctx, ep)
		cancel()
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		ids[st.Header.MemberId] = i
		if st.Leader != 0 {
			votes[st.Leader]++
		}
	}
	for leader, n := range votes {
		if i, ok := ids[leader]; ok && n > len(set.Endpoints())/2 {
			return set.Nodes()[i], i, nil
		}
	}
	return nil, -1, fmt.Errorf("etcd has no leader a majority agrees on (votes %v; errors: %s)", votes, strings.Join(errs, "; "))
}

// etcdLockState is LockState on the etcd topology: the lease time left of
// the oldest key under the lock's prefix, which is the holder's.
func (c *Cluster) etcdLockState(ctx context.Context, key string) (time.Duration, error) {
	resp, err := c.etcd.Admin().Get(ctx, EtcdKeyPrefix+key+"/", clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend), clientv3.WithLimit(1))
	if err != nil {
		return 0, fmt.Errorf("read the lock's keys: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return -2, nil
	}
	lease := resp.Kvs[0].Lease
	if lease == 0 {
		return -1, nil
	}
	ttl, err := c.etcd.Admin().TimeToLive(ctx, clientv3.LeaseID(lease))
	if err != nil {
		return 0, fmt.Errorf("read the lock's lease: %w", err)
	}
	if ttl.TTL < 0 {
		return -2, nil // the lease expired: the key goes with it
	}
	// In whole seconds, rounded down: a key in its last second reads 0.
	return time.Duration(ttl.TTL) * time.Second, nil
}
