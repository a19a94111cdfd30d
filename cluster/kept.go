package cluster

import (
	"errors"
	"io"
	"maps"
	"slices"
	"sync"
)

// Kept holds what a warm deployment's clients leave running between its
// runs (package program's lock programs, each with its relay's
// listeners), by key, so that the next run on the same deployment picks
// it up rather than starting it again. Only a cluster a Pool handed out
// keeps anything: one started for a single run (no pool, -fresh) refuses,
// so that its clients start anew. Whatever it holds is closed with the
// cluster, when the Pool discards it or closes: nothing kept outlives the
// deployment.
type Kept struct {
	mu     sync.Mutex
	pooled bool // a Pool handed the cluster out: it may serve another run
	closed bool
	items  map[string]io.Closer
}

// Keep holds v under key until the next Take of key, closing what key
// held before, and reports true; it reports false, holding nothing, when
// the cluster serves no other run (the caller then closes v itself).
func (k *Kept) Keep(key string, v io.Closer) bool {
	k.mu.Lock()
	if !k.pooled || k.closed {
		k.mu.Unlock()
		return false
	}
	if k.items == nil {
		k.items = map[string]io.Closer{}
	}
	old := k.items[key]
	k.items[key] = v
	k.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return true
}

// Keeps reports whether Keep would hold anything: the cluster may serve
// another run.
func (k *Kept) Keeps() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pooled && !k.closed
}

// Take hands over what key holds, and nil when it holds nothing; the
// caller owns it from then on.
func (k *Kept) Take(key string) io.Closer {
	k.mu.Lock()
	defer k.mu.Unlock()
	v := k.items[key]
	delete(k.items, key)
	return v
}

// pool marks the cluster as one a Pool handed out.
func (k *Kept) pool() {
	k.mu.Lock()
	k.pooled = true
	k.mu.Unlock()
}

// close closes everything held, and refuses to hold more.
func (k *Kept) close() error {
	k.mu.Lock()
	k.closed = true
	items := k.items
	k.items = nil
	k.mu.Unlock()
	return closeAll(slices.Collect(maps.Values(items)))
}

// closeAll closes every one of closers at once and waits for them all:
// ending a lock program waits until its process group is gone, which may
// take a second or two, and a deployment keeps one a client, so closing
// them in turn would make the end of an exploration wait for their sum.
func closeAll[C io.Closer](closers []C) error {
	errs := make([]error, len(closers))
	var wg sync.WaitGroup
	for i, c := range closers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Close()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Origin says how a run came by the cluster, for its log: "started", or
// "reused" when it is a warm deployment a Pool handed out again.
func (c *Cluster) Origin() string {
	if c.reused {
		return "reused"
	}
	return "started"
}

// Kept is what the cluster's clients leave running between its runs.
func (c *Cluster) Kept() *Kept { return &c.kept }
