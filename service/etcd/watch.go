package etcd

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/history"
)

// watchBound bounds the watcher's start, each lease it looks up and its
// drain at stop.
const watchBound = 5 * time.Second

// WatchLock watches the keys under the lock's prefix from a client of its
// own, dialled straight to the members, past every client's link
// (service.LockWatcher): each put and delete is a server event, with its
// revision, the key's create revision and its lease. etcd says only that
// a key was deleted, never why; a key deleted with its lease gone from the
// server when the watcher asks is marked Gone: the lease expired or was
// revoked, and took the key with it.
func (d *deployment) WatchLock(ctx context.Context, key string, h *history.Recorder) (func(), error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: d.set.Endpoints(), DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("etcd watch: %w", err)
	}
	prefix := KeyPrefix + key + "/"
	if strings.HasPrefix(key, "/") {
		prefix = key + "/"
	}
	gctx, cancel := context.WithTimeout(ctx, watchBound)
	resp, err := cli.Get(gctx, prefix, clientv3.WithPrefix())
	cancel()
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd watch of %s: %w", prefix, err)
	}
	wctx, stopWatch := context.WithCancel(ctx)
	w := &etcdWatch{h: h, cli: cli, seen: h.Now()}
	// From the revision read on: no change between the read and the watch
	// is lost.
	ch := cli.Watch(clientv3.WithRequireLeader(wctx), prefix, clientv3.WithPrefix(),
		clientv3.WithRev(resp.Header.Revision+1), clientv3.WithPrevKV())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for wr := range ch {
			for _, ev := range wr.Events {
				w.add(wctx, ev)
			}
			if wr.IsProgressNotify() {
				w.reached(wr.Header.Revision)
			}
			w.seen = h.Now()
		}
	}()
	stopped := sync.OnceFunc(func() {
		// What the members committed by now reaches the watch before the
		// answer to a read made after it: the drain waits for that read's
		// revision.
		rctx, cancel := context.WithTimeout(wctx, watchBound)
		defer cancel()
		if last, err := cli.Get(rctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err == nil {
			w.await(rctx, last.Header.Revision)
		}
		stopWatch()
		<-done
		cli.Close()
	})
	context.AfterFunc(ctx, stopped) // a run that ends early stops it too
	return stopped, nil
}

// etcdWatch is the watcher of one lock's prefix.
type etcdWatch struct {
	h    *history.Recorder
	cli  *clientv3.Client
	seen time.Duration // when the watch last told anything, or began

	mu  sync.Mutex
	rev int64 // the revision up to which the watch has told every event
}

// add records one event of the watch.
func (w *etcdWatch) add(ctx context.Context, ev *clientv3.Event) {
	kv := ev.Kv
	if ev.Type == mvccpb.DELETE && ev.PrevKv != nil {
		kv = ev.PrevKv // a delete's own has only the key
	}
	se := &history.ServerEvent{Event: "put", Owner: -1, Created: kv.CreateRevision, Revision: ev.Kv.ModRevision}
	if kv.Lease != 0 {
		se.Session = fmt.Sprintf("%#x", kv.Lease)
	}
	if ev.Type == mvccpb.DELETE {
		se.Event = "delete"
		if kv.Lease != 0 {
			lctx, cancel := context.WithTimeout(ctx, watchBound)
			ttl, err := w.cli.TimeToLive(lctx, clientv3.LeaseID(kv.Lease))
			cancel()
			se.Gone = err == nil && ttl.TTL < 0
		}
	}
	w.h.Add(history.Op{Client: -1, Kind: history.KindServer, Key: string(ev.Kv.Key), Call: w.seen, Return: w.h.Now(), Server: se})
	w.reached(ev.Kv.ModRevision)
}

// await waits, within ctx, until the watch has told every event of the
// lock's prefix up to revision rev: a progress notification, asked for on
// the watch's own stream (its context's metadata names it), says the
// watch has reached a revision even when the prefix was quiet.
func (w *etcdWatch) await(ctx context.Context, rev int64) {
	if err := w.cli.RequestProgress(clientv3.WithRequireLeader(ctx)); err != nil {
		return
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !w.caught(rev) {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// reached notes that the watch has told every event up to rev.
func (w *etcdWatch) reached(rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rev = max(w.rev, rev)
}

// caught says the watch has told every event up to rev.
func (w *etcdWatch) caught(rev int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rev >= rev
}
