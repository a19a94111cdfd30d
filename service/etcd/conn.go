package etcd

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/harness"
)

// Of is client c's etcd client, dialled through c's links to the members,
// or nil on another service. Its connections stop while the client is
// paused, its lease keep-alives included, as a stopped process's do; a
// crash closes it, so its leases are no longer kept alive and expire.
// Each unary request (a Txn, a Put, a lease grant or revoke) passes the
// failpoints armed on the lock's commands, named by its method (TXN,
// LEASEGRANT); streams (a watch, the keep-alives) pass unstruck, and the
// client's pause stops them at its sockets.
func Of(c *harness.Client) *clientv3.Client {
	cli, _ := c.Handle().(*clientv3.Client)
	return cli
}

// Dial is c's etcd client of the members at addrs, c's links to them,
// with c's timeout for dialing.
func (Service) Dial(c *harness.Client, addrs []string) (harness.Handle, error) {
	dial := func(ctx context.Context, addr string) (net.Conn, error) { return c.DialContext(ctx, "tcp", addr) }
	timeout := c.Timeout()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   addrs,
		DialTimeout: timeout,
		// A member that stops answering (a cut link, a paused member) is
		// found out within the timeout, and the client moves on to another.
		DialKeepAliveTime:    timeout,
		DialKeepAliveTimeout: timeout,
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(dial),
			grpc.WithChainUnaryInterceptor(request(c))},
		// The client logs every broken connection a fault makes; the lock
		// gets the error all the same.
		Logger: zap.NewNop(),
		// Not the dial's: the client lives until it crashes or ends.
		Context: c.Context(),
	})
	if err != nil {
		// Only on a bad configuration (grpc dials lazily, so never on a
		// server): the run did not happen as written.
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	return cli, nil
}

// request passes each unary request of c's etcd client through c.Request,
// named by its gRPC method.
func request(c *harness.Client) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		name := strings.ToUpper(method[strings.LastIndex(method, "/")+1:])
		return c.Request(ctx, name, func() error { return invoke(ctx, method, req, reply, cc, opts...) })
	}
}

// Env gives a lock program LOCKLAB_ETCD, each member's host:port through
// its client's links, and LOCKLAB_SESSION_MS, the lease the Go locks ask
// for (Lease of the client's TTL), so that a program's faults are timed
// against the same lease.
func (Service) Env(c *harness.Client, addrs []string) []string {
	return []string{"LOCKLAB_ETCD=" + strings.Join(addrs, ","),
		"LOCKLAB_SESSION_MS=" + strconv.FormatInt(Lease(c.TTL()).Milliseconds(), 10)}
}

// Guarded is a Lease of an etcd lock that lets its holder guard a write to
// etcd by the lock itself: a transaction If(Guard()) commits only while
// the lease still owns the lock key, so a holder whose lease expired (a
// pause, a partition) cannot write over the next holder's work. The etcd
// resource (runner.EtcdResource) writes through it when the lease offers
// it (WriteStock).
type Guarded interface {
	harness.Lease
	// Guard is the comparison that holds while this lease owns the lock.
	Guard() clientv3.Cmp
}

// ReadStock reads the etcd resource's stock with c's etcd client.
func ReadStock(ctx context.Context, c *harness.Client) (int64, error) {
	return readStock(ctx, Of(c))
}

// WriteStock writes stock to the etcd resource with c's etcd client, as
// the holder of lease: in a transaction guarded by the lock key when the
// lease is Guarded, which reports wrote false when the guard failed; a
// plain Put otherwise, as code that trusts its lock does.
func WriteStock(ctx context.Context, c *harness.Client, lease harness.Lease, stock int64) (wrote bool, err error) {
	put := clientv3.OpPut(StockKey, strconv.FormatInt(stock, 10))
	g, ok := lease.(Guarded)
	if !ok {
		_, err = Of(c).Do(ctx, put)
		return err == nil, err
	}
	resp, err := Of(c).Txn(ctx).If(g.Guard()).Then(put).Commit()
	if err != nil {
		return false, err
	}
	return resp.Succeeded, nil
}
