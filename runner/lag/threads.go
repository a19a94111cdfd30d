package lag

import (
	"os"
	"sync"
	"syscall"
	"time"
)

// findEvery is how often a threads finds the run's threads again. Finding
// them costs about ten system calls a thread (its folder, its children and
// schedstat files opened, read and closed), reading a kept schedstat file
// one; the meter reads every queueEvery, and the reading of the run's
// threads was a fifth of the harness's CPU in a catalogue. A process or
// thread born in between is found late, and then all of its wait counts
// (mostQueued); one born and ended in between is missed, as one born and
// ended between two readings always was.
const findEvery = 500 * time.Millisecond

// threads reads how long each thread of a run's processes has waited for a
// core, as queueWaits does, but keeps each thread's schedstat file open and
// reads it again in place, finding the threads anew at most every
// findEvery. Safe for the meter's goroutine and a Wait at once.
type threads struct {
	roots  func() []int
	listed bool

	mu     sync.Mutex
	found  time.Time        // when the threads were last found
	files  map[int]*os.File // each thread's schedstat, by thread id
	closed bool
}

func newThreads(listed bool, roots func() []int) *threads {
	return &threads{roots: roots, listed: listed, files: make(map[int]*os.File)}
}

// waits is how long each thread of the run's processes has waited for a
// core, by thread id.
func (t *threads) waits() map[int]time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		// The meter has stopped: read once, keeping nothing open.
		return queueWaits(t.listed, t.roots()...)
	}
	if t.found.IsZero() || time.Since(t.found) >= findEvery {
		t.find()
	}
	waits := make(map[int]time.Duration, len(t.files))
	var buf [128]byte
	for tid, f := range t.files {
		// The file of a thread that has ended reads an error (ESRCH).
		n, err := syscall.Pread(int(f.Fd()), buf[:], 0)
		d, ok := time.Duration(0), false
		if err == nil && n > 0 {
			d, ok = runDelay(buf[:n])
		}
		if !ok {
			f.Close()
			delete(t.files, tid)
			continue
		}
		waits[tid] = d
	}
	return waits
}

// find opens the schedstat file of each thread of the run's processes
// that it has not open yet, and closes those of threads no longer found.
// Called with t.mu held.
func (t *threads) find() {
	seen := make(map[int]bool, len(t.files))
	walkThreads(t.roots(), t.listed, func(tid int, dir string) {
		seen[tid] = true
		if _, ok := t.files[tid]; ok {
			return
		}
		if f, err := os.Open(dir + "schedstat"); err == nil {
			t.files[tid] = f
		}
	})
	for tid, f := range t.files {
		if !seen[tid] {
			f.Close()
			delete(t.files, tid)
		}
	}
	t.found = time.Now()
}

// close closes every file kept; later readings keep none.
func (t *threads) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for tid, f := range t.files {
		f.Close()
		delete(t.files, tid)
	}
	t.closed = true
}
