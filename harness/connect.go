package harness

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// ClientOptions describe a client made by Connect.
type ClientOptions struct {
	ID      int
	TTL     time.Duration // the lease TTL locks are asked to use; 0 means 300 ms
	Timeout time.Duration // Redis timeouts; 0 means 1 s
	Key     string        // the lock key, for faults at the command that took it; "" means "lock"
	// Direct dials the nodes without network links, so no fault reaches it.
	Direct bool
	// Pool, when not nil, is the service's pool the client shares with
	// others as one of its request threads, in place of a handle of its
	// own (sqldb.OpenSharedPool).
	Pool Handle
	// Service dials the client's handle when the cluster's lock service
	// was started through the seam (cluster.Config.Service); nil
	// otherwise.
	Service Dialer
	// Inventory dials the client's connection to the inventory node
	// (service/redis's Inventory), which the workload's critical section
	// reads and writes; nil leaves the client without one.
	Inventory InventoryDialer
}

// Connect makes a client of cl outside any run, for testing or benchmarking
// a lock on its own. Close it when done.
func Connect(ctx context.Context, cl *cluster.Cluster, opts ClientOptions) (*Client, error) {
	if opts.TTL == 0 {
		opts.TTL = 300 * time.Millisecond
	}
	if opts.Timeout == 0 {
		opts.Timeout = time.Second
	}
	h, _ := history.New("") // in memory: cannot fail
	cfg := clientConfig{id: opts.ID, ttl: opts.TTL, key: opts.Key, timeout: opts.Timeout, history: h, points: failpoint.NewSet(nil), service: bind(opts.Service, cl), stock: opts.Inventory}
	if opts.Direct {
		cfg.inventory = cl.Inventory().Addr()
		for _, n := range cl.LockNodes() {
			cfg.nodes = append(cfg.nodes, n.Addr())
		}
		if dialsItself(cl) {
			cfg.serviceAddrs, cfg.nodes = cfg.nodes, nil // the service's nodes, not Redis ones
		}
		if len(cfg.nodes) > 0 {
			cfg.master = cfg.nodes[0]
		}
		return newClient(ctx, cfg), nil
	}
	client, _, err := connect(ctx, cl, cfg)
	return client, err
}

// Join makes client opts.ID of a run on cl, with one network link per lock
// node, recording into h and struck by the run's failpoints. The runner
// calls it; a test of a lock on its own calls Connect.
func Join(ctx context.Context, cl *cluster.Cluster, opts ClientOptions, h *history.Recorder, points *failpoint.Set) (*Client, []*network.Link, error) {
	return connect(ctx, cl, clientConfig{id: opts.ID, ttl: opts.TTL, key: opts.Key, timeout: opts.Timeout, history: h, points: points, shared: opts.Pool, service: bind(opts.Service, cl), stock: opts.Inventory})
}

// bind is d bound to cl's deployment when it dials only so (Bound).
func bind(d Dialer, cl *cluster.Cluster) Dialer {
	if b, ok := d.(Bound); ok {
		return b.Bind(cl.Deployment())
	}
	return d
}

// connect completes cfg with one link per lock master for client cfg.id and
// makes the client.
func connect(ctx context.Context, cl *cluster.Cluster, cfg clientConfig) (*Client, []*network.Link, error) {
	var links []*network.Link
	for _, n := range cl.LockNodes() {
		l, err := cl.Network().Link(ctx, fmt.Sprintf("c%d-%s", cfg.id, n.Name()), n.Addr())
		if err != nil {
			return nil, nil, err
		}
		links = append(links, l)
		cfg.nodes = append(cfg.nodes, l.Addr())
		cfg.direct = append(cfg.direct, n.Addr())
	}
	if dialsItself(cl) {
		// A service's own package dials its nodes (Dialer).
		cfg.serviceAddrs, cfg.nodes, cfg.direct = cfg.nodes, nil, nil
	}
	if len(cfg.nodes) > 0 {
		cfg.master = cfg.nodes[0]
	}
	cfg.inventory = cl.Inventory().Addr()
	if rs := replicaSet(cl); rs != nil {
		// Sentinel reports real addresses; this client dials each node
		// through its own link to it.
		byNode, index := map[string]string{}, map[string]int{}
		for i, n := range cl.LockNodes() {
			byNode[n.Addr()], index[n.Addr()] = links[i].Addr(), i
		}
		cfg.nodes, cfg.sentinels = nil, rs.SentinelAddrs()
		// Sentinel names the master only to the dialer: what it dials
		// tells the history which data node the client's commands reach.
		dialled := new(atomic.Int32)
		dialled.Store(-1)
		cfg.dialled = dialled
		cfg.failover = func(opts *redis.Options) *redis.Client {
			return rs.FailoverClient(opts, func(ctx context.Context, addr string) (net.Conn, error) {
				if i, ok := index[addr]; ok {
					dialled.Store(int32(i))
				}
				if via, ok := byNode[addr]; ok {
					addr = via
				}
				var d net.Dialer
				return d.DialContext(ctx, "tcp", addr)
			})
		}
		cfg.direct = nil
		cfg.probeFailover = func(opts *redis.Options) *redis.Client { return rs.FailoverClient(opts, nil) }
	}
	if db := cl.SQLInventory(); db != nil {
		cfg.stockDriver, cfg.stockDSN = db.Driver(), db.DSN()
	}
	return newClient(ctx, cfg), links, nil
}

// dialsItself reports whether cl's lock service dials each client's handle
// in its own package (Dialer). Redis's deployment is behind the seam
// (service/redis), but the harness still dials its clients itself.
func dialsItself(cl *cluster.Cluster) bool {
	return cl.Deployment() != nil && cl.Topology().Service() != cluster.Redis
}

// replicaSet is the replicated topology's set, or nil on another.
func replicaSet(cl *cluster.Cluster) *sentinel.ReplicaSet {
	if d, ok := cl.Deployment().(interface{ ReplicaSet() *sentinel.ReplicaSet }); ok {
		return d.ReplicaSet()
	}
	return nil
}
