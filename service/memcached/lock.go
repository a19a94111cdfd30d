package memcached

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/harness"
)

// MinLease is the shortest lease a correct memcached lock asks for. The
// server's clock ticks once a second and an item's expiry counts whole
// ticks, so an item added with an expiry of n seconds lives between n-1
// and n seconds: one second can be a moment (pitfall m2), and two are one
// at least.
const MinLease = 2 * time.Second

// Lease is the expiry a correct memcached lock asks for when its lease is
// to last ttl at least: ttl rounded up to whole seconds, and one more for
// the tick that may come at once. A lock that asked for ttl itself would
// hold it up to a second less, and a holder that counts on ttl would work
// on past its lease.
func Lease(ttl time.Duration) time.Duration {
	return max(MinLease, (ttl+time.Second-1)/time.Second*time.Second+time.Second)
}

// Lock is a memcached lock: `add` of the key with the holder's own token
// and an expiry, so that only one client stores it. Its zero options are
// the correct lock, the reference of the memcached topology: an expiry of
// Lease(TTL), renewed every third of it by a cas that names the item the
// holder read (so it never renews another's), and a release that expires
// the item by a cas, only while it still holds the holder's token. Its
// options make the catalogue's broken locks.
type Lock struct {
	c *harness.Client
	n int // acquires so far, to make each token unique

	// Seconds is the item's expiry; 0 means Lease of the client's TTL.
	Seconds int32
	// NoRenewal leaves the item to expire at its expiry, however long the
	// holder works.
	NoRenewal bool
	// PlainDelete releases with a get, a comparison of the token and a
	// plain delete: between the two, the item may expire and another
	// client add its own, which the delete then removes (pitfall m1).
	PlainDelete bool
}

// NewLock builds the correct memcached lock.
func NewLock(c *harness.Client) harness.Locker { return Lock{}.For(c) }

// NewLockNoRenewal is the correct lock without its renewal, correct for
// work that ends within its expiry, as the token lock is on Redis: the fix
// of pitfall memcached-get-delete, whose broken lock has no renewal either.
func NewLockNoRenewal(c *harness.Client) harness.Locker { return Lock{NoRenewal: true}.For(c) }

// For builds the lock of client c with l's options: Lock{...}.For is a
// harness.NewLocker.
func (l Lock) For(c *harness.Client) harness.Locker {
	l.c, l.n = c, 0
	return &l
}

// Acquire adds the key with this acquire's token.
func (l *Lock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	conn := Of(l.c)
	if conn == nil {
		return nil, errors.New("memcached lock: no memcached handle (the lock runs on topology memcached)")
	}
	l.n++
	token := fmt.Sprintf("c%d-%d", l.c.ID(), l.n)
	seconds := l.Seconds
	if seconds == 0 {
		seconds = int32(Lease(l.c.TTL()) / time.Second)
	}
	if err := conn.Add(ctx, key, token, seconds); err != nil {
		if errors.Is(err, ErrNotStored) {
			return nil, fmt.Errorf("%s: %w", key, harness.ErrNotAcquired)
		}
		return nil, err
	}
	lease := &lease{conn: conn, key: key, token: token, seconds: seconds, plainDelete: l.PlainDelete,
		stop: make(chan struct{}), renewed: make(chan struct{})}
	if l.NoRenewal {
		close(lease.renewed)
	} else {
		l.c.Go(lease.renew)
	}
	return lease, nil
}

// lease is a hold of a Lock.
type lease struct {
	conn        *Conn
	key, token  string
	seconds     int32
	plainDelete bool
	stop        chan struct{} // closed by Release: the renewal ends
	renewed     chan struct{} // closed once the renewal has ended
}

// Token is 0: the lock hands out no fencing token.
func (l *lease) Token() uint64 { return 0 }

// Release ends the renewal and removes the item while it holds the token.
// It waits for a renewal under way to end first: the renewal's cas gives
// the item a new CAS id, and a release that read the old one would fail
// its own cas, and say the lock was not held while it was.
func (l *lease) Release(ctx context.Context) error {
	close(l.stop)
	select {
	case <-l.renewed:
	case <-ctx.Done():
		return ctx.Err()
	}
	item, err := l.mine(ctx)
	if err != nil {
		return err
	}
	if l.plainDelete {
		err = l.conn.Delete(ctx, l.key)
	} else {
		// An expiry below zero expires the item at once: a delete that
		// applies only to the item read above.
		item.Expiration = -1
		err = l.conn.CompareAndSwap(ctx, item)
	}
	if Refused(err) {
		return fmt.Errorf("%s: %w", l.key, harness.ErrNotHeld)
	}
	return err
}

// mine reads the item, or ErrNotHeld when it no longer holds the token.
func (l *lease) mine(ctx context.Context) (*Item, error) {
	item, err := l.conn.Get(ctx, l.key)
	switch {
	case errors.Is(err, ErrCacheMiss):
		return nil, fmt.Errorf("%s: %w", l.key, harness.ErrNotHeld)
	case err != nil:
		return nil, err
	case string(item.Value) != l.token:
		return nil, fmt.Errorf("%s: %w", l.key, harness.ErrNotHeld)
	}
	return item, nil
}

// renew sets the item's expiry again every third of it, by a cas of the
// item it read, until Release, the client's end, or the item is no longer
// this lease's.
func (l *lease) renew(ctx context.Context) {
	defer close(l.renewed)
	tick := time.NewTicker(time.Duration(l.seconds) * time.Second / 3)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		item, err := l.mine(ctx)
		if errors.Is(err, harness.ErrNotHeld) {
			return
		}
		if err != nil {
			continue // an unknown outcome: try again at the next tick
		}
		item.Expiration = l.seconds
		if err := l.conn.CompareAndSwap(ctx, item); Refused(err) {
			return
		}
	}
}

// Reference is the correct memcached lock, called "memcached" in `check
// list`.
func (Service) Reference() (string, harness.NewLocker) { return "memcached", NewLock }
