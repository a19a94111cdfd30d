package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// Keys on the inventory node: the stock, and the newest fencing token the
// resource has accepted.
const (
	stockKey = "stock"
	fenceKey = "fence"
)

// The resource's side of fencing: it refuses a read or write whose token is
// older than the newest it has seen. Reads are fenced too: a critical section
// reads, then writes, and a stale holder that wrote before the new holder's
// write would otherwise still lose an update.
var fencedRead = goredis.NewScript(`
local newest = tonumber(redis.call("GET", KEYS[2]) or "0")
if tonumber(ARGV[1]) < newest then
	return redis.error_reply("stale token")
end
redis.call("SET", KEYS[2], ARGV[1])
return tonumber(redis.call("GET", KEYS[1]))`)

var fencedWrite = goredis.NewScript(`
local newest = tonumber(redis.call("GET", KEYS[2]) or "0")
if tonumber(ARGV[1]) < newest then
	return 0
end
redis.call("SET", KEYS[2], ARGV[1])
redis.call("SET", KEYS[1], ARGV[2])
return 1`)

// casWrite is CompareAndSet's script: the new stock only if the stock is
// still what the section read.
var casWrite = goredis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call("SET", KEYS[1], ARGV[2])
return 1`)

// Inventory dials each client's connection to the run's inventory node, a
// redis-server the cluster starts on every topology
// (harness.InventoryDialer): the workload's resource lives there, and the
// harness reaches it only through this package, which speaks go-redis.
type Inventory struct{}

// DialInventory is c's go-redis connection to the inventory node at addr,
// past any link but through c's crash and pause and the failpoints on the
// commands of its phase, as the workload's writes were always sent.
func (Inventory) DialInventory(c *harness.Client, addr string) harness.InventoryConn {
	rc := goredis.NewClient(options(addr, c.Timeout()))
	rc.AddHook(hook{c: c, node: -1})
	return inventory{rc}
}

// inventory is the inventory on its Redis node, through a client's hooked
// go-redis connection.
type inventory struct{ rc *goredis.Client }

// Read returns the stock, fenced when the lease has a token.
func (inv inventory) Read(ctx context.Context, token uint64) (int64, error) {
	if token == 0 {
		n, err := inv.rc.Get(ctx, stockKey).Int64()
		return n, closed(err)
	}
	n, err := fencedRead.Run(ctx, inv.rc, []string{stockKey, fenceKey}, token).Int64()
	return n, closed(err)
}

// Write stores the new stock, fenced when the lease has a token.
func (inv inventory) Write(ctx context.Context, stock int64, token uint64) (bool, error) {
	if token == 0 {
		return true, closed(inv.rc.Set(ctx, stockKey, strconv.FormatInt(stock, 10), 0).Err())
	}
	n, err := fencedWrite.Run(ctx, inv.rc, []string{stockKey, fenceKey}, token, stock).Int()
	return n == 1, closed(err)
}

// CompareAndSet stores stock if the stock is still old.
func (inv inventory) CompareAndSet(ctx context.Context, old, stock int64) (bool, error) {
	wrote, err := casWrite.Run(ctx, inv.rc, []string{stockKey}, old, stock).Bool()
	return wrote, closed(err)
}

// Close closes the connection, when the client crashes or ends.
func (inv inventory) Close() error { return inv.rc.Close() }

// closed is err, which also says harness.ErrClosed when go-redis refused
// the request on a closed client; its message stays go-redis's, as the
// history recorded it before.
func closed(err error) error {
	if errors.Is(err, goredis.ErrClosed) {
		return closedError{err}
	}
	return err
}

// closedError is go-redis's refusal on a closed client, as
// harness.ErrClosed.
type closedError struct{ err error }

func (e closedError) Error() string        { return e.err.Error() }
func (e closedError) Unwrap() error        { return e.err }
func (e closedError) Is(target error) bool { return target == harness.ErrClosed }

// admin is the inventory node's direct client, past any link.
func admin(cl *cluster.Cluster) (*goredis.Client, error) {
	n, ok := cl.Inventory().(sentinel.Node)
	if !ok {
		return nil, fmt.Errorf("the inventory node %s is no redis-server locklab can reach", cl.Inventory().Name())
	}
	return n.Admin(), nil
}

// SetStock puts the starting stock on cl's inventory node, past any link.
func SetStock(ctx context.Context, cl *cluster.Cluster, stock int64) error {
	a, err := admin(cl)
	if err != nil {
		return err
	}
	return a.Set(ctx, stockKey, stock, 0).Err()
}

// ReadStock reads what is left of the stock on cl's inventory node, past
// any link.
func ReadStock(ctx context.Context, cl *cluster.Cluster) (int64, error) {
	a, err := admin(cl)
	if err != nil {
		return 0, err
	}
	return a.Get(ctx, stockKey).Int64()
}

// ResetInventory empties cl's inventory node, its stock and its fencing
// token with it, and checks that it holds nothing: a cluster.Scrub, for a
// Pool that reuses the cluster.
func ResetInventory(ctx context.Context, cl *cluster.Cluster) error {
	a, err := admin(cl)
	if err != nil {
		return err
	}
	if err := a.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("flush the inventory: %w", err)
	}
	return emptyNode(ctx, cl.Inventory().(sentinel.Node))
}
