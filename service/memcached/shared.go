package memcached

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// shared is the gomemcache client of one service process whose request
// threads are several clients (runner's Workload.Pool): one client, and so
// one pool of connections, which every client's handle uses (Share). It
// is a handle itself only so that the runner can close it once every
// client is closed.
type shared struct{ mc *memcache.Client }

// OpenSharedPool opens the gomemcache client that the clients of one
// service process share (service.Pooler), through a link of its own to the
// server, keeping at most size idle connections (MaxIdleConns), each
// request bounded by timeout.
//
// gomemcache's pool bounds only the connections it keeps idle: a request
// that finds none idle dials another, so no request ever waits for a
// connection, and a small pool costs dials, not waits. Its connections
// belong to no client: a client's crash or pause does not reach them
// (runner's Workload.Pool refuses such faults), while each client's
// requests still pass its own failpoints (Share).
func (Service) OpenSharedPool(ctx context.Context, cl *cluster.Cluster, size int, timeout time.Duration) (harness.Handle, error) {
	d, ok := cl.Deployment().(*deployment)
	if !ok {
		return nil, errors.New("shared pool: the topology has no memcached server")
	}
	l, err := cl.Network().Link(ctx, "service-memcached", d.node.Addr())
	if err != nil {
		return nil, fmt.Errorf("shared pool: %w", err)
	}
	mc := memcache.New(l.Addr())
	var nd net.Dialer
	mc.DialContext = nd.DialContext
	mc.Timeout, mc.MaxIdleConns = timeout, size
	return &shared{mc: mc}, nil
}

// Share is c's handle on the shared client (harness.Sharer): c's requests
// pass c's failpoints, on the shared connections.
func (s *shared) Share(c *harness.Client) harness.Handle { return &Conn{c: c, mc: s.mc} }

// Close closes the shared idle connections, once every client is closed.
func (s *shared) Close() error { return s.mc.Close() }
