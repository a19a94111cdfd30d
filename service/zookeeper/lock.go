package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// Lock is go-zookeeper's lock recipe (zk.NewLock) on the zookeeper
// topology: each acquire creates an ephemeral sequential node under the
// lock's parent, the lowest holds the lock, and each waiter watches the
// node just before its own. Zab commits the node on a quorum before
// Create returns, so a failover loses no lock; but the node lives only as
// long as the holder's session, and the Lock never tells its holder that
// the session expired (samuel/go-zookeeper#20): a holder paused past its
// session timeout still believes it holds the lock. Fenced, it treats a
// lost session as a lost lock, carries its node's creation zxid (Czxid),
// which grows with every holder, as a fencing token, and tries an unlock
// again when a leader change lost it: the recipe's Unlock gives up, and
// its node, with the lock, then lives as long as the session.
type Lock struct {
	c      *harness.Client
	fenced bool
	// acquires counts this client's acquires, to name each one's node.
	acquires atomic.Int64
}

// NewLock is zk.Lock as its documentation uses it: the reference lock of
// the zookeeper topology.
func NewLock(c *harness.Client) harness.Locker { return &Lock{c: c} }

// NewLockFenced is zk.Lock whose holder checks its session and fences the
// resource with its node's Czxid.
func NewLockFenced(c *harness.Client) harness.Locker { return &Lock{c: c, fenced: true} }

// Reference is go-zookeeper's Lock, called "zk-lock" in `check list`: the
// correct lock of the zookeeper topology.
func (Service) Reference() (string, harness.NewLocker) { return "zk-lock", NewLock }

// Acquire locks a fresh zk.Lock on the key's parent node, its node's data
// naming this acquire, waiting at most the client's timeout. Lock itself
// cannot be cancelled: past the timeout it goes on in the background, gives
// the lock back at once if it ever gets it, and deletes its node if it
// fails (giveUp).
func (l *Lock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	conn := Of(l.c)
	if conn == nil {
		return nil, errors.New("zk lock: no ZooKeeper session (the lock runs on topology " + string(cluster.ZooKeeperTopology) + ")")
	}
	parent := LockRoot + "/" + key
	id := fmt.Sprintf("client %d, acquire %d", l.c.ID(), l.acquires.Add(1))
	lock := zk.NewLock(conn, parent, zk.WorldACL(zk.PermAll))
	done := make(chan error, 1)
	go func() { done <- lock.LockWithData([]byte(id)) }()
	wctx, cancel := context.WithTimeout(ctx, l.c.Timeout())
	defer cancel()
	var err error
	select {
	case err = <-done:
	case <-wctx.Done():
		go func() {
			if err := <-done; err == nil {
				_ = lock.Unlock() // nobody holds it: give it back
			} else {
				_ = l.giveUp(conn, parent, id, err)
			}
		}()
		return nil, fmt.Errorf("%w: no lock within %s", harness.ErrNotAcquired, l.c.Timeout())
	}
	if err != nil {
		return nil, l.giveUp(conn, parent, id, err)
	}
	lease := &zkLease{lock: lock, conn: conn, c: l.c}
	if !l.fenced {
		return lease, nil
	}
	// The holder's node is the lowest of the parent's children; Lock does
	// not say which it is, so it is read back, and must be this session's.
	if err := lease.readNode(parent, id); err != nil {
		_ = lock.Unlock()
		return nil, err
	}
	return lease, nil
}

// giveUp is what a failed Lock leaves: Lock returns an error from any step
// after creating its node (a connection lost while it lists or watches the
// others, a reply lost) without deleting it, and that node stays queued,
// and then holds the lock for nobody, as long as the session lives: a lock
// stuck until the client ends. So the node whose data is id is deleted;
// once it is gone the lock is surely not this acquire's. The acquire waits
// for that within the client's timeout, and past it the deletion goes on
// trying in the background, as long as the client lives (its session, and
// the node with it, end when it crashes or closes), as kazoo's Lock does:
// a lost reply costs a stall of a timeout, never a lock held by no one.
func (l *Lock) giveUp(conn *zk.Conn, parent, id string, lockErr error) error {
	gone := make(chan error, 1)
	go func() {
		for {
			err := dropNode(conn, parent, id)
			if err == nil || l.c.Sleep(context.Background(), 50*time.Millisecond) != nil {
				gone <- err // deleted, or crashed or closed: its session ends with it
				return
			}
		}
	}()
	timer := time.NewTimer(l.c.Timeout())
	defer timer.Stop()
	select {
	case err := <-gone:
		if err == nil {
			return fmt.Errorf("%w: %w", harness.ErrNotAcquired, lockErr)
		}
		return fmt.Errorf("zk lock: %w; delete its node: %w", lockErr, err)
	case <-timer.C:
		return fmt.Errorf("zk lock: %w; its node not deleted within %s (still trying)", lockErr, l.c.Timeout())
	}
}

// dropNode deletes the child of parent that this session created with
// data id, if there is one.
func dropNode(conn *zk.Conn, parent, id string) error {
	children, _, err := conn.Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, child := range children {
		data, stat, err := conn.Get(parent + "/" + child)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		if string(data) != id || stat.EphemeralOwner != conn.SessionID() {
			continue
		}
		if err := conn.Delete(parent+"/"+child, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	return nil
}

// zkLease is one lock of a Lock; session and token are set when fenced.
type zkLease struct {
	lock    *zk.Lock
	conn    *zk.Conn
	c       *harness.Client
	session int64  // the session that created the holder's node
	token   uint64 // the holder's node's Czxid
}

// readNode finds the holder's node under parent and keeps its owner and
// Czxid. A node of another acquire (its data is not id) means this one's
// session expired since Lock returned: the lock is not ours.
func (l *zkLease) readNode(parent, id string) error {
	children, _, err := l.conn.Children(parent)
	if err != nil {
		return fmt.Errorf("zk lock: read the holder's node: %w", err)
	}
	if len(children) == 0 {
		return fmt.Errorf("%w: no node under %s", harness.ErrNotAcquired, parent)
	}
	lowest := slices.MinFunc(children, func(a, b string) int { return seq(a) - seq(b) })
	data, stat, err := l.conn.Get(parent + "/" + lowest)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: the lowest node went: the session expired", harness.ErrNotAcquired)
	case err != nil:
		return fmt.Errorf("zk lock: read the holder's node: %w", err)
	case string(data) != id || stat.EphemeralOwner != l.conn.SessionID():
		return fmt.Errorf("%w: the lowest node is not this acquire's: its session expired", harness.ErrNotAcquired)
	}
	l.session, l.token = stat.EphemeralOwner, uint64(stat.Czxid)
	return nil
}

// seq is a lock node's sequence number, as zk.Lock parses it.
func seq(name string) int {
	_, after, _ := strings.Cut(name, "lock-")
	n, _ := strconv.Atoi(after)
	return n
}

// Release unlocks: deletes the holder's node. A node already gone (its
// session expired) is ErrNotHeld. Fenced, the lock also counts as lost
// when its session changed or expired, or heard nothing from any server
// for a session timeout (the servers may have expired it meanwhile): the
// node is deleted all the same, in case the session lives on.
func (l *zkLease) Release(ctx context.Context) error {
	lost := ""
	switch {
	case l.session == 0:
	case l.conn.SessionID() != l.session || l.conn.State() == zk.StateExpired:
		lost = "the session that held it expired"
	case Silence(l.c) > l.c.TTL():
		lost = fmt.Sprintf("its session heard nothing for %s, past its timeout", Silence(l.c).Round(time.Millisecond))
	}
	err := l.lock.Unlock()
	if l.session != 0 && lost == "" {
		// Seen in check compare: a delete sent as the leader died failed
		// with "could not connect to a server", and a fresh client waited
		// 3.5 s in vain behind the node of a session that lived on.
		for start := time.Now(); unlockLost(err) && time.Since(start) < l.c.Timeout(); {
			if l.c.Sleep(ctx, 50*time.Millisecond) != nil {
				break // crashed: its session ends with it
			}
			if err = l.lock.Unlock(); errors.Is(err, zk.ErrNoNode) && l.conn.SessionID() == l.session {
				err = nil // the lost delete did reach the server
			}
		}
	}
	switch {
	case lost != "":
		return fmt.Errorf("%w: %s", harness.ErrNotHeld, lost)
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrSessionExpired):
		return fmt.Errorf("%w: %w", harness.ErrNotHeld, err)
	}
	return fmt.Errorf("zk unlock: %w", err)
}

// unlockLost reports whether an unlock failed on the way to the server, so
// that its node may still be there: any error but the node or its session
// being gone.
func unlockLost(err error) bool {
	return err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrSessionExpired) && !errors.Is(err, zk.ErrNotLocked)
}

// Token is the holder's node's Czxid when fenced, else 0 (no fencing).
func (l *zkLease) Token() uint64 { return l.token }
