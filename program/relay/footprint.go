package relay

import (
	"strings"
	"sync"

	"github.com/locklab/locklab/footprint"
)

// learning collects what a program's requests show of its lock (package
// footprint): the requests seen while an acquire is under way are kept
// apart, and learned only once the program says it took the lock, so that
// a refused acquire, or a request of the critical section, teaches
// nothing. What a connection shows of its session (ZooKeeper's timeout) is
// learned at once.
type learning struct {
	mu        sync.Mutex
	acquiring bool
	pending   []footprint.Footprint
	learner   footprint.Learner
}

// seen notes what one request showed, when it showed anything.
func (l *learning) seen(f footprint.Footprint, ok bool) {
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case f.LeaseOnly && f.Key == "":
		l.learner.Add(f) // a session's lease, whenever it comes
	case l.acquiring:
		l.pending = append(l.pending, f)
	}
}

// BeginAcquire marks the start of an acquire: the requests from here until
// EndAcquire are its own.
func (r *Relay) BeginAcquire() {
	r.learn.mu.Lock()
	defer r.learn.mu.Unlock()
	r.learn.acquiring, r.learn.pending = true, nil
}

// EndAcquire ends the acquire BeginAcquire began; took says the program
// answered that it holds the lock, and only then does what its requests
// showed count.
func (r *Relay) EndAcquire(took bool) {
	r.learn.mu.Lock()
	defer r.learn.mu.Unlock()
	if took {
		for _, f := range r.learn.pending {
			r.learn.learner.Add(f)
		}
	}
	r.learn.acquiring, r.learn.pending = false, nil
}

// Footprint is what the program's acquires that took the lock showed of
// it, and why any of it could not be told.
func (r *Relay) Footprint() (footprint.Footprint, []string) {
	r.learn.mu.Lock()
	defer r.learn.mu.Unlock()
	return r.learn.learner.Footprint(), r.learn.learner.Ambiguous()
}

// statementFootprint is what an SQL statement, as the relay splits it into
// words, shows.
func statementFootprint(words []string) (footprint.Footprint, bool) {
	return footprint.SQL(strings.Join(words, " "), nil)
}
