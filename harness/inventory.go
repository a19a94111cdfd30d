package harness

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// Inventory is the run's protected resource as one client reaches it: the
// inventory node, which no fault touches, through the client's own
// connection, so that a crashed client writes nothing and a paused one
// writes only once it resumes. The resource fences: it refuses a read or
// write whose token is older than the newest it has seen.
type Inventory interface {
	// Read returns the stock, fenced when token is not 0.
	Read(ctx context.Context, token uint64) (int64, error)
	// Write stores the new stock, fenced when token is not 0; it reports
	// false when the resource refused a stale token.
	Write(ctx context.Context, stock int64, token uint64) (wrote bool, err error)
	// CompareAndSet is an optimistic lock's write (OptimisticLease): it
	// stores stock only if the stock is still old, and reports whether it
	// did.
	CompareAndSet(ctx context.Context, old, stock int64) (wrote bool, err error)
}

// ErrClosed is a request on a connection the client had already closed,
// when it crashed: it was never sent.
var ErrClosed = errors.New("connection closed")

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
var fencedRead = redis.NewScript(`
local newest = tonumber(redis.call("GET", KEYS[2]) or "0")
if tonumber(ARGV[1]) < newest then
	return redis.error_reply("stale token")
end
redis.call("SET", KEYS[2], ARGV[1])
return tonumber(redis.call("GET", KEYS[1]))`)

var fencedWrite = redis.NewScript(`
local newest = tonumber(redis.call("GET", KEYS[2]) or "0")
if tonumber(ARGV[1]) < newest then
	return 0
end
redis.call("SET", KEYS[2], ARGV[1])
redis.call("SET", KEYS[1], ARGV[2])
return 1`)

// casWrite is CompareAndSet's script: the new stock only if the stock is
// still what the section read.
var casWrite = redis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call("SET", KEYS[1], ARGV[2])
return 1`)

// redisInventory is the inventory on its Redis node, through a client's
// hooked go-redis connection.
type redisInventory struct{ rc *redis.Client }

// Read returns the stock, fenced when the lease has a token.
func (inv redisInventory) Read(ctx context.Context, token uint64) (int64, error) {
	if token == 0 {
		n, err := inv.rc.Get(ctx, stockKey).Int64()
		return n, closed(err)
	}
	n, err := fencedRead.Run(ctx, inv.rc, []string{stockKey, fenceKey}, token).Int64()
	return n, closed(err)
}

// Write stores the new stock, fenced when the lease has a token.
func (inv redisInventory) Write(ctx context.Context, stock int64, token uint64) (bool, error) {
	if token == 0 {
		return true, closed(inv.rc.Set(ctx, stockKey, strconv.FormatInt(stock, 10), 0).Err())
	}
	n, err := fencedWrite.Run(ctx, inv.rc, []string{stockKey, fenceKey}, token, stock).Int()
	return n == 1, closed(err)
}

// CompareAndSet stores stock if the stock is still old.
func (inv redisInventory) CompareAndSet(ctx context.Context, old, stock int64) (bool, error) {
	wrote, err := casWrite.Run(ctx, inv.rc, []string{stockKey}, old, stock).Bool()
	return wrote, closed(err)
}

// closed is err, which also says ErrClosed when go-redis refused the
// request on a closed client; its message stays go-redis's, as the
// history recorded it before.
func closed(err error) error {
	if errors.Is(err, redis.ErrClosed) {
		return closedError{err}
	}
	return err
}

// closedError is go-redis's refusal on a closed client, as ErrClosed.
type closedError struct{ err error }

func (e closedError) Error() string        { return e.err.Error() }
func (e closedError) Unwrap() error        { return e.err }
func (e closedError) Is(target error) bool { return target == ErrClosed }

// admin is the inventory node's direct client, past any link.
func admin(cl *cluster.Cluster) (*redis.Client, error) {
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
