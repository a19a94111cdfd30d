package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/history"
)

// watchBound bounds the watcher's start and its last read at stop: a
// watcher that cannot read the ensemble within it records nothing more.
const watchBound = 5 * time.Second

// WatchLock watches the children of the lock's parent node from a session
// of its own, opened straight to the servers, past every client's link
// (service.LockWatcher): each child created or deleted is a server event,
// with the client its data names ("client N, acquire K") and the session
// it was ephemeral to. ZooKeeper's watches fire once and say only that
// the children changed, so the watcher reads them again at each and
// records the difference: a child made and gone between two reads is
// never seen.
func (d *deployment) WatchLock(ctx context.Context, key string, h *history.Recorder) (func(), error) {
	conn, _, err := zk.Connect(d.set.Endpoints(), 10*time.Second, zk.WithLogger(quiet{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("zookeeper watch: %w", err)
	}
	w := &watch{h: h, conn: conn, parent: LockRoot + "/" + key, nodes: map[string]zkNode{}}
	if strings.HasPrefix(key, "/") {
		w.parent = key
	}
	// The first read is the state before the workload: its children are
	// known, not recorded.
	first := make(chan error, 1)
	var ch <-chan zk.Event
	go func() {
		var err error
		ch, err = w.read(false)
		first <- err
	}()
	select {
	case err = <-first:
	case <-time.After(watchBound):
		conn.Close() // ends the read
		<-first
		err = errors.New("no answer")
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("zookeeper watch of %s: %w", w.parent, err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx, ch, stop)
	}()
	stopped := sync.OnceFunc(func() {
		close(stop)
		select {
		case <-done:
		case <-time.After(watchBound):
		}
		conn.Close() // ends a read still waiting for the servers
		<-done
	})
	context.AfterFunc(ctx, stopped) // a run that ends early stops it too
	return stopped, nil
}

// watch is the watcher of one lock's parent node.
type watch struct {
	h      *history.Recorder
	conn   *zk.Conn
	parent string
	nodes  map[string]zkNode // the children last read, by name
	seen   time.Duration     // when the last read was sent
}

// zkNode is what the watcher read of a child when it appeared.
type zkNode struct {
	owner   int
	session int64
	czxid   int64
}

// run reads the children at each change until stop, then once more, or
// until ctx ends. A read that fails (the servers lost, a failover under
// way) is tried again after a moment.
func (w *watch) run(ctx context.Context, ch <-chan zk.Event, stop <-chan struct{}) {
	retry := time.NewTimer(0)
	retry.Stop()
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			_, _ = w.read(true)
			return
		case <-ch:
		case <-retry.C:
		}
		var err error
		if ch, err = w.read(true); err != nil {
			if errors.Is(err, zk.ErrClosing) {
				return // closed by stop
			}
			ch = nil
			retry.Reset(50 * time.Millisecond)
		}
	}
}

// read reads the parent's children and sets a watch on them (on the
// parent's creation while it does not exist), recording, when record is
// set, each child made or gone since the last read.
func (w *watch) read(record bool) (<-chan zk.Event, error) {
	sent := w.h.Now()
	children, _, ch, err := w.conn.ChildrenW(w.parent)
	if errors.Is(err, zk.ErrNoNode) {
		var ok bool
		ok, _, ch, err = w.conn.ExistsW(w.parent)
		if ok {
			// Made meanwhile: a watch on its children is set at once.
			children, _, ch, err = w.conn.ChildrenW(w.parent)
		}
	}
	if err != nil {
		return nil, err
	}
	now := make(map[string]bool, len(children))
	for _, c := range children {
		now[c] = true
		if _, ok := w.nodes[c]; !ok {
			n := w.node(c)
			w.nodes[c] = n
			if record {
				w.add("create", c, n)
			}
		}
	}
	for c, n := range w.nodes {
		if !now[c] {
			delete(w.nodes, c)
			if record {
				w.add("delete", c, n)
			}
		}
	}
	w.seen = sent
	return ch, nil
}

// node reads a new child's data and stat: the client its data names, the
// session it is ephemeral to, its czxid. A child gone before it is read
// says nothing of them.
func (w *watch) node(child string) zkNode {
	n := zkNode{owner: -1}
	data, stat, err := w.conn.Get(w.parent + "/" + child)
	if err != nil {
		return n
	}
	var acquire int
	if _, err := fmt.Sscanf(string(data), "client %d, acquire %d", &n.owner, &acquire); err != nil {
		n.owner = -1
	}
	n.session, n.czxid = stat.EphemeralOwner, stat.Czxid
	return n
}

// add records one change to child, seen by the read under way: it
// happened after the read before it was sent.
func (w *watch) add(event, child string, n zkNode) {
	ev := &history.ServerEvent{Event: event, Owner: n.owner, Created: n.czxid}
	if n.session != 0 {
		ev.Session = fmt.Sprintf("%#x", n.session)
	}
	w.h.Add(history.Op{Client: -1, Kind: history.KindServer, Key: w.parent + "/" + child, Call: w.seen, Return: w.h.Now(), Server: ev})
}
