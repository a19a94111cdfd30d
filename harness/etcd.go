package harness

import (
	"context"
	"net"
	"strings"
	"time"

	"github.com/locklab/locklab/harness/socket"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// Etcd is the client's connection to the etcd topology's members, each
// through its own link, or nil on the other topologies. Its connections
// stop while the client is paused, its lease keep-alives included, as a
// stopped process's do; a crash closes it, so its leases are no longer
// kept alive and expire.
func (c *Client) Etcd() *clientv3.Client { return c.etcd }

// openEtcd dials the etcd members at endpoints (this client's links to
// them) with the client's timeout for dialing, and connections that
// stop while it is paused.
func (c *Client) openEtcd(endpoints []string, timeout time.Duration) *clientv3.Client {
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		if c.crashed.Load() {
			return nil, ErrNotSent
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return socket.Pausable(conn, owner{c}), nil
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: timeout,
		// A member that stops answering (a cut link, a paused member) is
		// found out within the timeout, and the client moves on to another.
		DialKeepAliveTime:    timeout,
		DialKeepAliveTimeout: timeout,
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(dial),
			grpc.WithChainUnaryInterceptor(c.etcdRequest)},
		// The client logs every broken connection a fault makes; the lock
		// gets the error all the same.
		Logger: zap.NewNop(),
		// Not ctx: the client lives until Close or a crash, not until
		// the call that made it returns.
		Context: c.ctx,
	})
	if err != nil {
		// clientv3.New fails only on a bad configuration (grpc dials
		// lazily, so never on a server): the run did not happen as
		// written, and the lock finds no client.
		c.spoilf("client %d: etcd client: %v", c.id, err)
		return nil
	}
	return cli
}

// etcdRequest passes one unary etcd request of the lock (a Txn, a Put, a
// lease grant or revoke) through the failpoints armed on the lock's
// commands, named by its method (TXN, LEASEGRANT), as a statement is on
// SQL: a crash before or after it, a pause, a delay, a lost reply. The
// harness cannot tell from a request whether it took the lock, so
// AfterTook never strikes on etcd. Streams (a watch, the lease's
// keep-alives) pass unstruck; the client's pause stops them at its sockets.
func (c *Client) etcdRequest(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if c.crashed.Load() {
		return ErrNotSent
	}
	name := strings.ToUpper(method[strings.LastIndex(method, "/")+1:])
	return c.statement(ctx, c.phaseOf(ctx), name, func() error { return invoke(ctx, method, req, reply, cc, opts...) })
}

// EtcdGuarded is a Lease of an etcd lock that lets its holder guard a
// write to etcd by the lock itself: a transaction If(Guard()) commits only
// while the lease still owns the lock key, so a holder whose lease expired
// (a pause, a partition) cannot write over the next holder's work. The
// etcd resource (runner.EtcdResource) writes through it when the lease
// offers it.
type EtcdGuarded interface {
	Lease
	// Guard is the comparison that holds while this lease owns the lock.
	Guard() clientv3.Cmp
}
