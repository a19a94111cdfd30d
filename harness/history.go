package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/locklab/locklab/models"
)

// Kind says what an Op records.
type Kind string

const (
	KindAcquire Kind = "acquire" // Locker.Acquire
	KindRelease Kind = "release" // Lease.Release
	KindSection Kind = "section" // one critical section on the inventory, read to write
	KindCrash   Kind = "crash"   // a client crashed
	KindFault   Kind = "fault"   // a fault, from inject to heal
	KindEnd     Kind = "end"     // what the harness found after the workload stopped
)

// NeverReturned is the Return of an operation that had not returned when the
// history ended; checkers treat it as returning at the end.
const NeverReturned time.Duration = -1

// Op is one line of a history. Times are since the start of the run, from one
// monotonic clock.
type Op struct {
	Client  int            `json:"client"`
	Kind    Kind           `json:"kind"`
	Key     string         `json:"key,omitempty"`
	Call    time.Duration  `json:"call_ns"`
	Return  time.Duration  `json:"return_ns"`
	Outcome models.Outcome `json:"outcome,omitempty"`
	Error   string         `json:"error,omitempty"`
	Nested  bool           `json:"nested,omitempty"` // acquire/release inside a critical section
	Probe   bool           `json:"probe,omitempty"`  // done by the liveness probe, not the workload
	Token   uint64         `json:"token,omitempty"`

	// Sections.
	Observed int64                `json:"observed,omitempty"`
	Written  int64                `json:"written,omitempty"`
	Result   models.SectionResult `json:"result,omitempty"`

	// Faults, crashes and the end record.
	Fault  string `json:"fault,omitempty"`
	Detail string `json:"detail,omitempty"`

	// The end record.
	End *End `json:"end,omitempty"`
}

// End is what the harness found once the workload had stopped.
type End struct {
	Stock     int64         `json:"stock"`               // inventory left
	Initial   int64         `json:"initial"`             // inventory at the start
	KeyExists bool          `json:"key_exists"`          // the lock key still exists
	PTTL      time.Duration `json:"pttl_ns"`             // its PTTL; -1 when it has no expiry
	Stuck     []int         `json:"stuck,omitempty"`     // clients that did not finish their cycle in time
	Probe     bool          `json:"probe"`               // the liveness probe got the lock
	ProbeWait time.Duration `json:"probe_wait_ns"`       // how long the probe waited
	Bound     time.Duration `json:"bound_ns"`            // how long anyone was allowed to wait
	ProbeErr  string        `json:"probe_err,omitempty"` // why the probe failed
	Unfired   []string      `json:"unfired,omitempty"`   // required failpoints that never fired: the scenario did not happen
}

// History records operations as they happen, and writes each as one JSON
// line at once, so that a crash of the harness loses nothing that returned.
type History struct {
	base time.Time

	mu  sync.Mutex
	ops []Op
	w   *bufio.Writer
	f   *os.File
	err error
}

// NewHistory starts an empty history whose clock starts now. When path is
// not empty, every operation is also appended to it as a JSON line.
func NewHistory(path string) (*History, error) {
	h := &History{base: time.Now()}
	if path == "" {
		return h, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	h.f, h.w = f, bufio.NewWriter(f)
	return h, nil
}

// Now is the time since the start of the history.
func (h *History) Now() time.Duration { return time.Since(h.base) }

// Add records op.
func (h *History) Add(op Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op)
	if h.w == nil || h.err != nil {
		return
	}
	b, err := json.Marshal(op)
	if err == nil {
		b = append(b, '\n')
		_, err = h.w.Write(b)
	}
	if err == nil {
		err = h.w.Flush()
	}
	h.err = err
}

// Ops returns a copy of every operation recorded so far.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

// Close flushes and closes the file, reporting any write error met on the way.
func (h *History) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		return h.err
	}
	err := h.f.Close()
	h.f, h.w = nil, nil
	if h.err != nil {
		return fmt.Errorf("history: %w", h.err)
	}
	return err
}

// ReadHistory reads a history written by History, one JSON object per line.
func ReadHistory(r io.Reader) ([]Op, error) {
	var ops []Op
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		var op Op
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			return nil, fmt.Errorf("history line %d: %w", line, err)
		}
		ops = append(ops, op)
	}
	return ops, sc.Err()
}

// end returns the time of the history's last event: the Return standing in
// for operations that never returned.
func end(ops []Op) time.Duration {
	var last time.Duration
	for _, op := range ops {
		last = max(last, op.Call, op.Return)
	}
	return last + 1
}

// returned is op's Return, or the end of the history when it never returned.
func returned(op Op, end time.Duration) time.Duration {
	if op.Return == NeverReturned {
		return end
	}
	return op.Return
}

// endRecord finds the End of a history, if the run got that far.
func endRecord(ops []Op) *End {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].Kind == KindEnd {
			return ops[i].End
		}
	}
	return nil
}
