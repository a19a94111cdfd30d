package redis

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// Of is c's connection to the Redis topology's lock master (on replicated,
// the master Sentinel names), through c's links, crash and pause, and the
// failpoints on the lock's commands: what a lock on one master sends its
// commands on, as memcached.Of is a memcached lock's. It is nil on the
// topologies of other services.
func Of(c *harness.Client) *goredis.Client {
	if h, ok := c.Handle().(*handle); ok {
		return h.redis
	}
	return nil
}

// Nodes is c's connection to each lock master of the redlock topology, in
// order; on the other Redis topologies it holds just Of(c).
func Nodes(c *harness.Client) []*goredis.Client {
	h, ok := c.Handle().(*handle)
	switch {
	case !ok:
		return nil
	case len(h.nodes) == 0 && h.redis != nil:
		return []*goredis.Client{h.redis}
	}
	return h.nodes
}

// handle is a client's go-redis connections to the lock's masters, each
// hooked (hook): harness.Handle.
type handle struct {
	redis *goredis.Client   // the master's; on redlock the first master's
	nodes []*goredis.Client // every master's, on redlock only
	// dialled is, on replicated, the index of the data node the Sentinel
	// failover client last dialled (-1 before any): the master its
	// commands go to, for the history's replies.
	dialled *atomic.Int32
}

// Close closes every connection, when the client crashes or ends.
func (h *handle) Close() error {
	var errs []error
	if h.redis != nil {
		errs = append(errs, h.redis.Close())
	}
	for _, n := range h.nodes {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}

// ReplyNode is the lock node whose replies to a command sent to node the
// history records (harness.ReplyNoder): on replicated the data node the
// failover client last dialled, which Sentinel named master then; on
// redlock node itself; with one master, that master: its replies say when
// a late DEL or another client's command freed the key, which a client's
// lane, its pauses around the command included, cannot (the story's
// cause).
func (h *handle) ReplyNode(node int) (int, bool) {
	switch {
	case h.dialled != nil:
		n := int(h.dialled.Load())
		return n, n >= 0
	case len(h.nodes) > 1:
		return node, true
	}
	return 0, h.redis != nil
}

// Dial opens c's connections to the masters at addrs, c's links to them in
// the order of the deployment's nodes (harness.Dialer). On replicated the
// connection is a Sentinel failover client, which dials each node Sentinel
// names (by its own address) through c's link to it.
func (d *masters) Dial(c *harness.Client, addrs []string) (harness.Handle, error) {
	h := &handle{}
	if len(addrs) > 1 {
		for i, addr := range addrs {
			h.nodes = append(h.nodes, dial(c, addr, i))
		}
	}
	if len(addrs) > 0 {
		h.redis = dial(c, addrs[0], 0)
	}
	return h, nil
}

// dial is a go-redis client of c to addr, lock node node, hooked.
func dial(c *harness.Client, addr string, node int) *goredis.Client {
	rc := goredis.NewClient(options(addr, c.Timeout()))
	rc.AddHook(hook{c: c, node: node})
	return rc
}

// Dial opens c's Sentinel failover client: Sentinel reports real
// addresses, and c dials each node through its own link to it, addrs in
// the order of the data nodes. What it dials tells the history which data
// node the client's commands reach.
func (d *replicated) Dial(c *harness.Client, addrs []string) (harness.Handle, error) {
	byNode, index := map[string]string{}, map[string]int{}
	for i, n := range d.nodes {
		if i < len(addrs) {
			byNode[n.Addr()], index[n.Addr()] = addrs[i], i
		}
	}
	dialled := new(atomic.Int32)
	dialled.Store(-1)
	rc := d.rs.FailoverClient(options("", c.Timeout()), func(ctx context.Context, addr string) (net.Conn, error) {
		if i, ok := index[addr]; ok {
			dialled.Store(int32(i))
		}
		if via, ok := byNode[addr]; ok {
			addr = via
		}
		var nd net.Dialer
		return nd.DialContext(ctx, "tcp", addr)
	})
	rc.AddHook(hook{c: c, node: 0})
	return &handle{redis: rc, dialled: dialled}, nil
}

// Env is the environment of a lock program on the masters at addrs, for
// a program that reads it rather than Endpoints: LOCKLAB_REDIS, or
// LOCKLAB_NODES on redlock.
func (d *masters) Env(c *harness.Client, addrs []string) []string {
	if len(addrs) > 1 {
		return []string{"LOCKLAB_NODES=" + strings.Join(addrs, ",")}
	}
	return []string{"LOCKLAB_REDIS=" + strings.Join(addrs, ",")}
}

// Endpoints are what a lock program dials: the master, or redlock's
// masters, through c's links (addrs), which package program's relay reads.
func (d *masters) Endpoints(c *harness.Client, addrs []string) harness.Endpoints {
	if len(addrs) > 1 {
		return harness.Endpoints{Nodes: addrs}
	}
	return harness.Endpoints{Redis: strings.Join(addrs, ",")}
}

// Env is the replicated topology's environment: the Sentinels and the
// name they know the master by.
func (d *replicated) Env(c *harness.Client, addrs []string) []string {
	return []string{"LOCKLAB_SENTINELS=" + strings.Join(d.rs.SentinelAddrs(), ","), "LOCKLAB_MASTER=" + sentinel.MasterName}
}

// Endpoints are the Sentinels and c's links to the data nodes (addrs): a
// program's relay forwards to the links, and its relayed Sentinels
// (sentinel.Relay) name the relay in place of the nodes.
func (d *replicated) Endpoints(c *harness.Client, addrs []string) harness.Endpoints {
	return harness.Endpoints{Sentinels: d.rs.SentinelAddrs(), Master: sentinel.MasterName, Links: addrs, SentinelRelay: d.rs}
}
