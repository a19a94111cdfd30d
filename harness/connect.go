package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
)

// ClientOptions describe a client made by Connect.
type ClientOptions struct {
	ID      int
	TTL     time.Duration // the lease TTL locks are asked to use; 0 means 300 ms
	Timeout time.Duration // Redis timeouts; 0 means 1 s
	Key     string        // the lock key, for faults at the command that took it; "" means "lock"
	// KeyOf, when set, is the lock's key on the servers as the lock's own
	// requests have shown it so far (a library's "app:KEY"), which tells
	// the commands that took it in place of Key; "" leaves it to Key.
	KeyOf func() string
	// Direct dials the nodes without network links, so no fault reaches it.
	Direct bool
	// Pool, when not nil, is the service's pool the client shares with
	// others as one of its request threads, in place of a handle of its
	// own (service.OpenSharedPool).
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
	cfg := clientConfig{id: opts.ID, ttl: opts.TTL, key: opts.Key, keyOf: opts.KeyOf, timeout: opts.Timeout, history: h, points: failpoint.NewSet(nil), service: bind(opts.Service, cl), stock: opts.Inventory}
	if opts.Direct {
		cfg.inventory = cl.Inventory().Addr()
		for _, n := range cl.LockNodes() {
			cfg.serviceAddrs = append(cfg.serviceAddrs, n.Addr())
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
	return connect(ctx, cl, clientConfig{id: opts.ID, ttl: opts.TTL, key: opts.Key, keyOf: opts.KeyOf, timeout: opts.Timeout, history: h, points: points, shared: opts.Pool, service: bind(opts.Service, cl), stock: opts.Inventory})
}

// bind is d bound to cl's deployment when it dials only so (Bound). With
// no d, a deployment that dials its own clients (Redis's, which knows its
// topology's nodes and Sentinels) is the Dialer.
func bind(d Dialer, cl *cluster.Cluster) Dialer {
	if own, ok := cl.Deployment().(Dialer); ok && d == nil {
		return own
	}
	if b, ok := d.(Bound); ok {
		return b.Bind(cl.Deployment())
	}
	return d
}

// connect completes cfg with one link per lock node for client cfg.id and
// makes the client, whose service dials its nodes through those links
// (Dialer).
func connect(ctx context.Context, cl *cluster.Cluster, cfg clientConfig) (*Client, []*network.Link, error) {
	var links []*network.Link
	for _, n := range cl.LockNodes() {
		l, err := cl.Network().Link(ctx, fmt.Sprintf("c%d-%s", cfg.id, n.Name()), n.Addr())
		if err != nil {
			return nil, nil, err
		}
		links = append(links, l)
		cfg.serviceAddrs = append(cfg.serviceAddrs, l.Addr())
	}
	cfg.inventory = cl.Inventory().Addr()
	cfg.kept = cl.Kept()
	if db := cl.SQLInventory(); db != nil {
		cfg.stockDriver, cfg.stockDSN = db.Driver(), db.DSN()
	}
	return newClient(ctx, cfg), links, nil
}
