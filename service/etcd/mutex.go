package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// Mutex is etcd's own lock recipe on the etcd topology: a session (a
// lease its client keeps alive) and concurrency.Mutex, which puts a key
// under the lock's prefix attached to that lease; the oldest key holds the
// lock, the others wait for the keys before theirs to go. Raft commits the
// key on a majority before Lock returns, so a failover loses no lock; but
// a holder paused past its lease, which then expires, still believes it
// holds the lock (Jepsen, etcd 3.4.3; etcd-io/etcd#11456). Guarded, its
// lease lets the holder's writes to etcd be guarded by its lock key
// (Guarded), which keeps a stale holder's write out.
type Mutex struct {
	c       *harness.Client
	guarded bool
}

// NewMutex is concurrency.Mutex as its documentation uses it: the
// reference lock of the etcd topology.
func NewMutex(c *harness.Client) harness.Locker { return &Mutex{c: c} }

// NewMutexGuarded is concurrency.Mutex whose leases guard the holder's
// writes to etcd by the lock key (Txn(If(mutex.IsOwner())).Then(...)).
func NewMutexGuarded(c *harness.Client) harness.Locker {
	return &Mutex{c: c, guarded: true}
}

// ttlSeconds is the lease TTL etcd is asked for, in seconds
// (Lease).
func (l *Mutex) ttlSeconds() int {
	return int(Lease(l.c.TTL()) / time.Second)
}

// Acquire grants a lease, keeps it alive in a session and locks the mutex,
// waiting at most the client's timeout for the holder to let go, then
// renews the lease once. When it
// does not get the lock it revokes the lease, which removes the key it
// queued with; only when that revoke fails too is the outcome unknown.
func (l *Mutex) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	cli := Of(l.c)
	if cli == nil {
		return nil, errors.New("etcd mutex: no etcd client (the lock runs on topology " + string(cluster.EtcdTopology) + ")")
	}
	gctx, cancel := context.WithTimeout(ctx, l.c.Timeout())
	grant, err := cli.Grant(gctx, int64(l.ttlSeconds()))
	cancel()
	if err != nil {
		// A lease with no key holds nothing, and expires on its own.
		return nil, fmt.Errorf("%w: grant a lease: %w", harness.ErrNotAcquired, err)
	}
	// The session keeps the lease alive in the client's background, on the
	// client's context (not ctx, which ends with this call), until Release.
	session, err := concurrency.NewSession(cli, concurrency.WithTTL(l.ttlSeconds()), concurrency.WithLease(grant.ID))
	if err != nil {
		return nil, fmt.Errorf("%w: session: %w", harness.ErrNotAcquired, err)
	}
	mutex := concurrency.NewMutex(session, KeyPrefix+key)
	lctx, cancel := context.WithTimeout(ctx, l.c.Timeout())
	err = lockWithin(lctx, mutex)
	cancel()
	if err == nil {
		// Renew the lease as the lock is taken: its keep-alive last renewed
		// it up to a third of a TTL ago, or granted it before a wait for
		// the holder, and a holder is owed a whole TTL from when it knows it
		// holds the lock, as Redis's SET PX gives it (the classifier counts
		// a lease from there). A failed renewal leaves the lease as the
		// keep-alive last renewed it.
		kctx, cancel := context.WithTimeout(ctx, l.c.Timeout())
		_, _ = cli.KeepAliveOnce(kctx, grant.ID)
		cancel()
		lease := &etcdLease{session: session, mutex: mutex, timeout: l.c.Timeout()}
		if l.guarded {
			return guardedLease{lease}, nil
		}
		return lease, nil
	}
	// Revoking the lease deletes the key Lock may have queued: then the
	// lock is surely not ours.
	if cerr := closeSession(session, l.c.Timeout()); cerr != nil {
		return nil, fmt.Errorf("lock: %w; revoke the lease: %w", err, cerr)
	}
	return nil, fmt.Errorf("%w: %w", harness.ErrNotAcquired, err)
}

// lockWithin locks mutex, or gives up when ctx ends. Lock alone does not
// return then: after a wait that ctx ended, it deletes its queued key with
// the client's context, which has no deadline, and a delete proposed while
// the cluster changes leader is lost and answered only at the server's
// request timeout (5 s plus two election timeouts). The caller revokes the
// lease instead, which removes the key all the same; the abandoned Lock
// ends by itself, deleting nothing but its own key.
func lockWithin(ctx context.Context, mutex *concurrency.Mutex) error {
	done := make(chan error, 1)
	go func() { done <- mutex.Lock(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// closeSession stops the session's keep-alives and revokes its lease
// within timeout; once the keep-alives stop, an unrevoked lease expires
// on its own.
func closeSession(s *concurrency.Session, timeout time.Duration) error {
	s.Orphan()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := s.Client().Revoke(ctx, s.Lease())
	return err
}

// etcdLease is one lock of a Mutex.
type etcdLease struct {
	session *concurrency.Session
	mutex   *concurrency.Mutex
	timeout time.Duration
}

// Release unlocks the mutex (deletes the lock key) and revokes the lease.
func (l *etcdLease) Release(ctx context.Context) error {
	uctx, cancel := context.WithTimeout(ctx, l.timeout)
	err := l.mutex.Unlock(uctx)
	cancel()
	// The lease goes too: a lease per lock, as the key goes with it.
	if cerr := closeSession(l.session, l.timeout); err == nil && cerr != nil {
		err = fmt.Errorf("revoke the lease: %w", cerr)
	}
	return err
}

// Token is the revision at which the lock was taken, which grows with
// every holder: a fencing token.
func (l *etcdLease) Token() uint64 { return uint64(l.mutex.Header().Revision) }

// guardedLease is an etcdLease that offers its lock key as a guard.
type guardedLease struct{ *etcdLease }

// Guard holds while the lease's key is the one that took the lock.
func (l guardedLease) Guard() clientv3.Cmp { return l.mutex.IsOwner() }

// Reference is etcd's concurrency.Mutex, called "etcd-mutex" in `check
// list`: the correct lock of the etcd topology.
func (Service) Reference() (string, harness.NewLocker) { return "etcd-mutex", NewMutex }
