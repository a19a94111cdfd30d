package harness

import (
	"context"
	"errors"
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

// InventoryConn is a client's connection to the inventory: what its
// Inventory reads and writes through, closed when the client crashes or
// ends.
type InventoryConn interface {
	Inventory
	Close() error
}

// InventoryDialer dials each client's connection to the inventory node (a
// redis-server the cluster starts on every topology, cluster.Inventory),
// at addr past any link, through the client's crash and pause and the
// failpoints on its commands (Commands): service/redis's, which speaks the
// node's protocol, so that the harness needs no client library.
type InventoryDialer interface {
	DialInventory(c *Client, addr string) InventoryConn
}
