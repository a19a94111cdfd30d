package footprint

import "sync"

// Acquires learns a lock's footprint from the requests of its acquires, as
// a relay sees them go by: the requests seen between Begin and End are
// kept apart, and learned only when End says the acquire took the lock, so
// that a refused acquire, or a request of the critical section, teaches
// nothing. What a connection shows of its session (Key "", LeaseOnly: a
// ZooKeeper session's timeout) is learned whenever it comes. The zero
// Acquires is ready to use, and safe for concurrent use.
type Acquires struct {
	mu        sync.Mutex
	acquiring bool
	pending   []Footprint
	learner   Learner
}

// Seen notes what one request showed, when it showed anything (ok).
func (a *Acquires) Seen(f Footprint, ok bool) {
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case f.LeaseOnly && f.Key == "":
		a.learner.Add(f)
	case a.acquiring:
		a.pending = append(a.pending, f)
	}
}

// Begin marks the start of an acquire: the requests from here until End
// are its own.
func (a *Acquires) Begin() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.acquiring, a.pending = true, nil
}

// End ends the acquire Begin began; took says it took the lock, and only
// then does what its requests showed count.
func (a *Acquires) End(took bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if took {
		for _, f := range a.pending {
			a.learner.Add(f)
		}
	}
	a.acquiring, a.pending = false, nil
}

// Footprint is what the acquires that took the lock showed of it, and why
// any of it could not be told.
func (a *Acquires) Footprint() (Footprint, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.learner.Footprint(), a.learner.Ambiguous()
}
