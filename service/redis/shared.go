package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// shared is the go-redis pool of one service process whose request
// threads are several clients (runner's Workload.Pool): one go-redis
// client of a few connections to each lock master, which every client's
// handle uses (Share). It is a handle itself only so that the runner can
// close it once every client is closed.
type shared struct {
	redis   *goredis.Client   // the master's; on redlock the first master's
	nodes   []*goredis.Client // every master's, on redlock only
	dialled *atomic.Int32     // on replicated, as handle's
	timeout time.Duration
}

// OpenSharedPool opens the go-redis pool that the clients of one service
// process share (service.Pooler): size connections to each lock master (on
// replicated, a Sentinel failover client's to the master), through links
// of its own, each command bounded by timeout, and a command that finds
// every connection taken waits for one as long (go-redis's PoolTimeout).
//
// What is shared is the connections and their dials: they belong to no
// client, so a client's crash or pause does not reach them (runner's
// Workload.Pool refuses such faults). What stays each client's is its
// handle's view of the pool (Share): its commands pass its own failpoints
// and are recorded as its own, the wait for a free connection within
// them. A lock that waits by retrying holds a connection only while each
// try is on the wire; one that blocks on the server (WAIT) holds it while
// it blocks, keeping it from the holder's release and renewals.
func (Service) OpenSharedPool(ctx context.Context, cl *cluster.Cluster, size int, timeout time.Duration) (harness.Handle, error) {
	opts := options("", timeout)
	opts.PoolSize, opts.PoolTimeout = size, timeout
	opts.MaxIdleConns, opts.MinIdleConns = size, 0
	switch d := cl.Deployment().(type) {
	case *replicated:
		return d.sharedPool(ctx, cl, opts)
	case resettable: // single and redlock
		return d.sharedPool(ctx, cl, opts)
	}
	return nil, errors.New("shared pool: the topology has no Redis master")
}

// sharedPool is the single and redlock topologies' shared pool: a go-redis
// client to each master through a link of the pool's own.
func (d *masters) sharedPool(ctx context.Context, cl *cluster.Cluster, opts *goredis.Options) (harness.Handle, error) {
	s := &shared{timeout: opts.ReadTimeout}
	for i, n := range d.nodes {
		l, err := cl.Network().Link(ctx, fmt.Sprintf("service-redis-%d", i), n.Addr())
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("shared pool: %w", err)
		}
		o := *opts
		o.Addr = l.Addr()
		rc := goredis.NewClient(&o)
		if i == 0 {
			s.redis = rc
		}
		if len(d.nodes) > 1 {
			s.nodes = append(s.nodes, rc)
		}
	}
	return s, nil
}

// sharedPool is the replicated topology's shared pool: one Sentinel
// failover client, which dials each data node Sentinel names through a
// link of the pool's own.
func (d *replicated) sharedPool(ctx context.Context, cl *cluster.Cluster, opts *goredis.Options) (harness.Handle, error) {
	byNode, index := map[string]string{}, map[string]int{}
	for i, n := range d.nodes {
		l, err := cl.Network().Link(ctx, fmt.Sprintf("service-redis-%d", i), n.Addr())
		if err != nil {
			return nil, fmt.Errorf("shared pool: %w", err)
		}
		byNode[n.Addr()], index[n.Addr()] = l.Addr(), i
	}
	s := &shared{dialled: new(atomic.Int32), timeout: opts.ReadTimeout}
	s.dialled.Store(-1)
	s.redis = d.rs.FailoverClient(opts, func(ctx context.Context, addr string) (net.Conn, error) {
		if i, ok := index[addr]; ok {
			s.dialled.Store(int32(i))
		}
		if via, ok := byNode[addr]; ok {
			addr = via
		}
		var nd net.Dialer
		return nd.DialContext(ctx, "tcp", addr)
	})
	return s, nil
}

// Share is c's handle on the shared pool (harness.Sharer): for each master,
// a go-redis client that shares the pool's connections (WithTimeout's
// clone keeps its parent's pool) with c's hook of its own, so that c's
// commands pass c's failpoints and are recorded as c's. Closing it would
// close the shared connections: the harness never closes a shared
// handle, the pool's Close does.
func (s *shared) Share(c *harness.Client) harness.Handle {
	view := func(rc *goredis.Client, node int) *goredis.Client {
		v := rc.WithTimeout(s.timeout)
		v.AddHook(hook{c: c, node: node})
		return v
	}
	h := &handle{dialled: s.dialled}
	if s.redis != nil {
		h.redis = view(s.redis, 0)
	}
	for i, n := range s.nodes {
		if i == 0 {
			h.nodes = append(h.nodes, h.redis)
			continue
		}
		h.nodes = append(h.nodes, view(n, i))
	}
	return h
}

// Close closes the shared connections, once every client is closed.
func (s *shared) Close() error {
	var errs []error
	if s.redis != nil {
		errs = append(errs, s.redis.Close())
	}
	for i, n := range s.nodes {
		if i > 0 { // nodes[0] is redis
			errs = append(errs, n.Close())
		}
	}
	return errors.Join(errs...)
}
