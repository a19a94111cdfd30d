package memcached

import (
	"context"
	"errors"
	"strings"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/locklab/locklab/harness"
)

// Errors of a request that the server refused, as gomemcache reports them.
var (
	// ErrNotStored is an add of a key that exists, or a cas or touch of
	// one that does not.
	ErrNotStored = memcache.ErrNotStored
	// ErrCacheMiss is a get or delete of a key that does not exist.
	ErrCacheMiss = memcache.ErrCacheMiss
	// ErrCASConflict is a cas whose item changed since its get.
	ErrCASConflict = memcache.ErrCASConflict
)

// Item is an item as a get returns it, with the CAS id that a later cas
// names.
type Item = memcache.Item

// Conn is a client's handle to the memcached server: gomemcache's client,
// dialled through the client's link with the client's sockets (stopped
// while it is paused, refused once it crashed). Each request passes the
// failpoints armed on the lock's commands, named by its verb (ADD, GETS,
// CAS, DELETE, TOUCH), and takes a context, which gomemcache's calls do
// not: the request is sent as soon as it is its turn, and its timeout is
// the client's.
type Conn struct {
	c  *harness.Client
	mc *memcache.Client
}

// Of is client c's handle to the memcached server, or nil on another
// service.
func Of(c *harness.Client) *Conn {
	conn, _ := c.Handle().(*Conn)
	return conn
}

// Dial is the handle of c to the server at addrs[0], through c's link.
func (Service) Dial(c *harness.Client, addrs []string) (harness.Handle, error) {
	mc := memcache.New(addrs...)
	mc.DialContext = c.DialContext
	mc.Timeout = c.Timeout()
	return &Conn{c: c, mc: mc}, nil
}

// Env gives a lock program LOCKLAB_MEMCACHED, the server's host:port
// through its client's link.
func (Service) Env(_ *harness.Client, addrs []string) []string {
	return []string{"LOCKLAB_MEMCACHED=" + strings.Join(addrs, ",")}
}

// Close closes the handle's idle connections.
func (m *Conn) Close() error { return m.mc.Close() }

// Add stores value at key with an expiry of seconds, only if key holds
// nothing: ErrNotStored otherwise.
func (m *Conn) Add(ctx context.Context, key, value string, seconds int32) error {
	return m.c.Request(ctx, "ADD", func() error {
		return m.mc.Add(&memcache.Item{Key: key, Value: []byte(value), Expiration: seconds})
	})
}

// Get reads key's item with its CAS id (gomemcache sends gets), or
// ErrCacheMiss.
func (m *Conn) Get(ctx context.Context, key string) (*Item, error) {
	var item *Item
	err := m.c.Request(ctx, "GETS", func() (err error) {
		item, err = m.mc.Get(key)
		return err
	})
	return item, err
}

// CompareAndSwap stores item only if its key's item is still the one
// item was read as (its CAS id): ErrCASConflict when it changed, and
// ErrNotStored when it is gone. An Expiration below zero expires the item
// at once, which makes it a delete guarded by the CAS id.
func (m *Conn) CompareAndSwap(ctx context.Context, item *Item) error {
	return m.c.Request(ctx, "CAS", func() error { return m.mc.CompareAndSwap(item) })
}

// Delete removes key's item, whoever stored it, or ErrCacheMiss.
func (m *Conn) Delete(ctx context.Context, key string) error {
	return m.c.Request(ctx, "DELETE", func() error { return m.mc.Delete(key) })
}

// Touch sets key's expiry to seconds from now, whoever stored it, or
// ErrCacheMiss.
func (m *Conn) Touch(ctx context.Context, key string, seconds int32) error {
	return m.c.Request(ctx, "TOUCH", func() error { return m.mc.Touch(key, seconds) })
}

// Refused reports whether err is the server's answer that the request did
// not apply (a miss, a key taken, a CAS conflict), not an unknown outcome.
func Refused(err error) bool {
	return errors.Is(err, ErrNotStored) || errors.Is(err, ErrCacheMiss) || errors.Is(err, ErrCASConflict)
}
