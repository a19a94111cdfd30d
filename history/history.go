// Package history is the record of one run: every operation a client did or
// suffered, with call and return times from one monotonic clock.
//
// # File format
//
// A history file is JSON lines. The first line names the format and its
// version:
//
//	{"format":"locklab-history","version":2}
//
// Every further line is one [Op], written the moment it completes, so a run
// that dies loses nothing that had returned. Times are nanoseconds since the
// start of the run; an operation that never returned has return_ns -1
// ([NeverReturned]). The last line of a finished run is an [End] record
// (kind "end").
//
// The kinds of Op:
//
//   - "acquire" and "release": a Locker.Acquire or Lease.Release, with the
//     outcome the client saw;
//   - "section": one critical section on the inventory, read to write;
//   - "crash": a client crashed; Failpoint, Phase and Command say where,
//     when a failpoint crashed it;
//   - "fault": a fault, from inject to heal, recorded as data: FaultKind
//     names its kind (fault.Kinds: "pause", "kill-master", "partition"),
//     Target what it struck (a client, a link, a connection or a lock node,
//     with the lock nodes it touched), Part which record of the fault it is
//     (the fault itself, or the failover, restart or injection wait it
//     brought), and Failpoint, Phase and Command where it struck when a
//     failpoint set it off. Its Fault (a label) and Detail are text for
//     people: readers decide from the fields, never from the text;
//   - "reply": one lock node's reply to one command a client sent it about
//     the lock key, recorded only when the topology has more than one lock
//     node (redlock, replicated), so that a drawing can tell which nodes
//     held the lock for whom. Its Node is the node's index in the cluster's
//     lock nodes, Command the command's first words, Phase the part of the
//     lock's life it was sent in (acquire, release, background), Outcome "ok" when the
//     reply granted, kept or removed the lock's state (SET said OK, a
//     script returned 1), "fail" when it did not (nil, 0), and Error the
//     error reply or why no reply came. The checkers' verdicts ignore
//     replies (the client's acquire and release say what it believed);
//     the kind of a failing verdict reads them node by node (checker.Judge);
//   - "request": one request of the lock to a SQL, etcd or memcached
//     server, with the outcome the client saw; Rows, when the server said
//     it, how many rows a SQL statement changed;
//   - "server": one change to the lock's nodes or keys that the servers
//     told a watcher of the run's own (its own session or client, outside
//     every client's links), started before the workload and drained
//     after it: a ZooKeeper child node of the lock created or deleted, an
//     etcd key under the lock's prefix put or deleted. Server says what
//     changed and whose it was; Call is when the watcher last saw the
//     nodes without the change, Return when it learned of it, so the
//     change happened between them;
//   - "end": what the harness found after the workload stopped.
//
// Kinds and fields added within a version are optional: a reader of an
// older history of the same version finds none of them.
//
// # Versions
//
// Version 2 records each fault as data (FaultKind, Target, Part,
// Failpoint, Phase, Command). Version 1 had only the label and detail
// text; Read still reads it, and fills the new fields from the labels
// version 1 wrote (v1.go), leaving a field empty where they do not tell,
// so that report folders kept from then still verify and draw.
package history

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/models"
)

// Format and Version name the file format in its first line.
const (
	Format  = "locklab-history"
	Version = 2
)

// header is the first line of a history file.
type header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

// Kind says what an Op records.
type Kind string

const (
	KindAcquire Kind = "acquire" // Locker.Acquire
	KindRelease Kind = "release" // Lease.Release
	KindSection Kind = "section" // one critical section on the inventory, read to write
	KindCrash   Kind = "crash"   // a client crashed
	KindFault   Kind = "fault"   // a fault, from inject to heal
	KindReply   Kind = "reply"   // one lock node's reply to one command about the lock key
	KindRequest Kind = "request" // one request of the lock to a SQL, etcd or memcached server, with its outcome
	KindServer  Kind = "server"  // a change to the lock's nodes or keys, as the servers told a watcher of the run's own
	KindEnd     Kind = "end"     // what the harness found after the workload stopped
)

// NeverReturned is the Return of an operation that had not returned when the
// history ended; checkers treat it as returning at the end.
const NeverReturned time.Duration = -1

// Target is what a fault struck. The client it struck, or whose links or
// connections it struck, is its Op's Client (-1 for none).
type Target struct {
	Type TargetType `json:"type"`
	// Nodes are the lock nodes the fault touched, by their index in the
	// cluster's lock nodes: the nodes struck, or those at the far end of
	// the links or connections struck. Empty when it touched none (a
	// client's process, clock or work) or, in version 1, when the label
	// did not say.
	Nodes []int `json:"nodes,omitempty"`
	// Role names a lock node struck by its role at the moment of the
	// fault, which only the injection learns ("master", "leader"); Nodes
	// then lists the other nodes struck with it.
	Role string `json:"role,omitempty"`
}

// TargetType is the kind of thing a fault strikes.
type TargetType string

// Target types.
const (
	TargetClient     TargetType = "client"     // a client: its process, its clock, its work, its commands
	TargetLink       TargetType = "link"       // a network path: a client's to lock nodes, a replica's to its master
	TargetConnection TargetType = "connection" // a client's open connections, closed under it
	TargetNode       TargetType = "node"       // a lock node's server
)

// Part is which record of a fault an Op is, when a fault brings about
// something the harness records apart.
type Part string

// Parts of a fault, besides the fault itself ("").
const (
	// PartFailover is Sentinel's promotion of a replica after a master's
	// kill, from the kill to the promotion.
	PartFailover Part = "failover"
	// PartRestart is a killed lock node's restart, until it served again.
	PartRestart Part = "restart"
	// PartInjection is the time a client waited at its failpoint while the
	// harness injected the fault (EffectHarness).
	PartInjection Part = "injection"
)

// FaultFailover labels the record of a Sentinel promotion.
const FaultFailover = "Sentinel failover"

// FaultSlowWork labels a critical section or command made slow on purpose:
// the workload's own time, which a correct lock must cover by renewing.
const FaultSlowWork = "slow work"

// Effect says how a fault can bear on a lock's safety, so that the
// classifier can tell which overlaps of holders a fault explains.
type Effect string

const (
	// EffectStall holds up the client it targets (all clients when it
	// targets the system), so that its renewals can miss the lease: a
	// partition, a black hole, a dropped reply, a skewed clock, a paused node.
	EffectStall Effect = "stall"
	// EffectDelay is a stall that can also hand the client a reply late,
	// after the lease the reply granted ran out: latency, a client pause, a
	// delayed command. A fault that withholds replies (a cut, a black hole,
	// a dropped reply) or delays the command itself (a paused node) cannot.
	EffectDelay Effect = "delay"
	// EffectLoss can drop or shorten the lock's state on a lock node while
	// a lease is on it: a node restarted, a node's clock jump, a failover.
	EffectLoss Effect = "loss"
	// EffectStage only sets the stage for other faults: no client is held
	// up and no state is lost by it alone (a cut replication link, a
	// preferred replica).
	EffectStage Effect = "stage"
	// EffectWork is the workload's own time (FaultSlowWork), which a lock
	// that renews its lease covers.
	EffectWork Effect = "work"
	// EffectHarness is time the harness itself held a client: a fault
	// injected at one of the client's failpoints (a node killed and
	// restarted at once) runs in that client's goroutine, which waits for
	// it. No scenario plans that wait, so a checker counts it as a stall of
	// the machine, never as a fault that explains a violation.
	EffectHarness Effect = "harness"
)

// FaultInjecting labels the time a client waited at one of its
// failpoints while the harness injected a fault (EffectHarness).
const FaultInjecting = "waiting for a fault's injection"

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
	// Took is when the command that took the lock key left the client, for
	// an acquire whose commands the harness saw take it (0: not seen). The
	// lease began on the server no earlier, however late the reply came.
	Took time.Duration `json:"took_ns,omitempty"`

	// Sections.
	Observed int64                `json:"observed,omitempty"`
	Written  int64                `json:"written,omitempty"`
	Result   models.SectionResult `json:"result,omitempty"`

	// Faults, crashes and the end record. Fault is a fault's label and
	// Detail says more, both for people only: nothing reads them to decide.
	Fault  string `json:"fault,omitempty"`
	Detail string `json:"detail,omitempty"`
	// FaultKind is the name of a fault's kind in fault.Kinds ("pause",
	// "kill-node"); empty for a version-1 fault whose label does not tell.
	FaultKind string `json:"fault_kind,omitempty"`
	// Target is what a fault struck; nil when not known (version 1).
	Target *Target `json:"target,omitempty"`
	// Part says which record of its fault an Op is: empty for the fault
	// itself, from inject to heal, or what the fault brought about,
	// recorded apart (PartFailover, PartRestart, PartInjection).
	Part Part `json:"part,omitempty"`
	// Failpoint names the failpoint where a fault or crash struck, for
	// those a failpoint set off (failpoint.BeforeCommand's name for a
	// command's); empty for a scheduled one. Phase and Command (below)
	// then say the phase the client was in and, at a command's failpoint,
	// the command's first words.
	Failpoint string `json:"failpoint,omitempty"`
	// Effect is how a fault bears on the lock's safety; empty in histories
	// written before effects were recorded, where every fault but slow work
	// counts as a stall.
	Effect Effect `json:"effect,omitempty"`
	// Crux marks a fault or crash the scenario is about (its failpoint or
	// scheduled fault was marked Crux), so that a reader can tell it from
	// the faults that only set the stage.
	Crux bool `json:"crux,omitempty"`

	// Replies (Phase and Command also faults and crashes, above). Node is
	// the lock node's index in the cluster's lock nodes
	// (a Redlock master, or a data node of the replicated topology: the one
	// the client's connection had dialled, which Sentinel named master);
	// Command is the command's first words ("SET NX PX", "EVAL"), never its
	// values. A Node of 0 is left out of the file. Phase is the part of
	// the lock's life the command was sent in ("acquire", "release",
	// "background" for a watchdog's renewal), which tells what a script
	// asked the node.
	Node    int    `json:"node,omitempty"`
	Command string `json:"command,omitempty"`
	Phase   string `json:"phase,omitempty"`
	// Rows is how many rows a request's SQL statement changed, as the
	// server said (a DELETE that freed a row: 1; one that found none: 0);
	// nil when it did not say (a query, a statement that failed, another
	// service's request).
	Rows *int64 `json:"rows,omitempty"`

	// Server is what a server event (KindServer) says changed.
	Server *ServerEvent `json:"server,omitempty"`

	// The end record.
	End *End `json:"end,omitempty"`
}

// ServerEvent is one change to a lock's nodes or keys, as the servers
// told a watcher of the run's own; the Op's Key names the node or key.
type ServerEvent struct {
	// Event is what happened to the node or key: "create", "put" or
	// "delete".
	Event string `json:"event"`
	// Owner is the client whose node or key it is, when its data names
	// one (the ZooKeeper locks write "client N, acquire K" in theirs);
	// -1 when it does not.
	Owner int `json:"owner"`
	// Session is the ZooKeeper session whose ephemeral node it is, or the
	// etcd lease the key is attached to, in hex; empty for none.
	Session string `json:"session,omitempty"`
	// Created orders the lock's nodes or keys by their creation, as the
	// servers number it (ZooKeeper's czxid, etcd's create revision):
	// the lock recipes grant the lowest.
	Created int64 `json:"created,omitempty"`
	// Revision is the etcd revision of the change; 0 on ZooKeeper.
	Revision int64 `json:"revision,omitempty"`
	// Gone says that, when the delete was seen, the server no longer had
	// the key's lease: it expired or was revoked, and took the key with
	// it. False when it still had it, or could not tell (ZooKeeper does
	// not tell another session's end).
	Gone bool `json:"gone,omitempty"`
}

// End is what the harness found once the workload had stopped.
type End struct {
	Stock     int64         `json:"stock"`               // inventory left
	Initial   int64         `json:"initial"`             // inventory at the start
	Held      bool          `json:"held"`                // the servers still hold the lock
	Expires   bool          `json:"expires,omitempty"`   // the hold ends by itself (a TTL, a lease, a row's expiry)
	Left      time.Duration `json:"left_ns,omitempty"`   // its time left, when it expires
	Stuck     []int         `json:"stuck,omitempty"`     // clients that did not finish their cycle in time
	Probe     bool          `json:"probe"`               // the liveness probe got the lock
	ProbeWait time.Duration `json:"probe_wait_ns"`       // how long the probe waited
	Bound     time.Duration `json:"bound_ns"`            // how long anyone was allowed to wait
	ProbeErr  string        `json:"probe_err,omitempty"` // why the probe failed
	// Waited is how long the harness waited for the clients to finish once
	// the workload stopped, and WaitLate how much of that the machine ran
	// late: its timers woke late, more tasks were runnable than it has
	// cores, or a thread of the run's processes waited that long for a
	// core. ProbeLate is the same for ProbeWait. Each wait lasts until
	// Bound of the machine's own time (the wait less its late part) has
	// passed, and at most ten times Bound. All zero in histories written
	// before.
	Waited    time.Duration `json:"waited_ns,omitempty"`
	WaitLate  time.Duration `json:"wait_late_ns,omitempty"`
	ProbeLate time.Duration `json:"probe_late_ns,omitempty"`
	// TTL and Work are the workload's lease and critical-section time,
	// against which the checkers measure stalls of the machine.
	TTL  time.Duration `json:"ttl_ns"`
	Work time.Duration `json:"work_ns"`
	// Timed says the correct lock of the run's topology counts the time
	// its acquire took against the lease, as Redlock does: such a lock
	// refuses a lease whose grant came after the lease ran out, so a late
	// grant excuses no overlap.
	Timed bool `json:"timed,omitempty"`
	// Spoiled says why the scenario did not happen as written: a
	// failpoint that never fired, a fault never injected. Any entry makes
	// every verdict unknown. Histories written before the word was
	// spoiled call it not_exercised (UnmarshalJSON).
	Spoiled []string `json:"spoiled,omitempty"`
	// Missed says why the fault the scenario is about (its crux), or a
	// fault explore drew, never struck the lock, though the run happened
	// as written: a correct lock kept the workload from ever reaching it
	// (e.g. it refused every acquire), or no relay reads a program's
	// requests. The verdicts stand, but say nothing of that fault. Older
	// histories call it unmet (UnmarshalJSON).
	Missed []string `json:"missed,omitempty"`
	// Footprint is what the lock's own requests showed of it (a lock
	// program's, through its relay): the key it took, its lease and where
	// its hold lives, each with the request it came from; nil when they
	// showed nothing. Ambiguous says why any of it could not be told.
	Footprint *footprint.Footprint `json:"footprint,omitempty"`
	Ambiguous []string             `json:"footprint_ambiguous,omitempty"`
	// Fired says, for each of the scenario's failpoints in the order it
	// armed them, whether it fired: which of the faults drawn at the
	// lock's own points struck it. Histories before it have none.
	Fired []bool `json:"fired,omitempty"`
	// Late are the stretches of the workload in which the harness's own
	// timer, asked to wake every few milliseconds, woke late: time the
	// machine gave to something other than the run. Checkers excuse by
	// them only what the machine alone could explain.
	Late []Span `json:"late,omitempty"`
	// Queued are stretches in which the servers and lock programs lost
	// time to the machine: for each 50 ms of the run, one as long as the
	// longest any one of their threads waited for a core in it. The
	// handover checker excuses by them a handover slow only by a starved
	// server, as ZooKeeper's JVMs are on a loaded machine.
	Queued []Span `json:"queued,omitempty"`
}

// UnmarshalJSON reads an End also under the names its fields had before
// the words spoiled and missed (not_exercised, unmet), and the lock's
// state as Redis says it (key_exists, pttl_ns): every version-1 history,
// and version-2 ones written before the renames.
func (e *End) UnmarshalJSON(b []byte) error {
	type fields End // End's fields, without this method
	var v struct {
		fields
		Renamed
		// Before the lock's state was said alike for every service, it
		// was Redis's: whether the key existed and its PTTL (-1: no
		// expiry).
		KeyExists *bool          `json:"key_exists"`
		PTTL      *time.Duration `json:"pttl_ns"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = End(v.fields)
	v.Renamed.Into(&e.Spoiled, &e.Missed)
	if v.KeyExists != nil {
		e.Held = *v.KeyExists
	}
	if v.PTTL != nil && e.Held && *v.PTTL >= 0 {
		e.Expires, e.Left = true, *v.PTTL
	}
	return nil
}

// Renamed are the names that the fields Spoiled and Missed had before
// those words (not_exercised, unmet), which saved histories and report
// folders still use: a reader of such a file embeds it beside its fields.
type Renamed struct {
	NotExercised []string `json:"not_exercised"`
	Unmet        []string `json:"unmet"`
}

// Into appends what r read to the fields of today's names.
func (r Renamed) Into(spoiled, missed *[]string) {
	*spoiled = append(*spoiled, r.NotExercised...)
	*missed = append(*missed, r.Unmet...)
}

// Span is a stretch of a run's time.
type Span struct {
	From time.Duration `json:"from_ns"`
	To   time.Duration `json:"to_ns"`
}

// Recorder records operations as they happen, and writes each as one JSON
// line at once, so that a crash of the harness loses nothing that returned.
type Recorder struct {
	base time.Time

	mu      sync.Mutex
	ops     []Op
	w       *bufio.Writer
	f       *os.File
	err     error
	watcher Watcher
}

// Watcher is told of a run's operations as they happen, for a live view of
// the run. Its methods are called from the run's goroutines and must return
// at once: the run waits for them.
type Watcher interface {
	// Began is an operation that lasts, told when it starts (a release when
	// it is called, a fault when it is injected), with Return
	// NeverReturned. It is not in the history until Recorded tells it
	// again, with the same Client, Kind and Call.
	Began(op Op)
	// Recorded is each operation as it is recorded, in the file's order.
	Recorded(op Op)
}

// New starts an empty history whose clock starts now. When path is not
// empty, the format line and then every operation are written to it.
func New(path string) (*Recorder, error) {
	h := &Recorder{base: time.Now()}
	if path == "" {
		return h, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	h.f, h.w = f, bufio.NewWriter(f)
	h.writeLine(header{Format: Format, Version: Version})
	if h.err != nil {
		f.Close()
		return nil, fmt.Errorf("history: %w", h.err)
	}
	return h, nil
}

// Now is the time since the start of the history.
func (h *Recorder) Now() time.Duration { return time.Since(h.base) }

// Watch tells w of every operation from now on; nil stops telling.
func (h *Recorder) Watch(w Watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watcher = w
}

// Add records op.
func (h *Recorder) Add(op Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op)
	h.writeLine(op)
	if h.watcher != nil {
		h.watcher.Recorded(op)
	}
}

// Begin tells the watcher, if any, that op has begun; it records nothing.
// Add records op when it ends. A live view needs it to end a hold when its
// release is called and to show a fault while it is in effect, as the
// checkers will once they are recorded.
func (h *Recorder) Begin(op Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.watcher != nil {
		op.Return = NeverReturned
		h.watcher.Began(op)
	}
}

// writeLine appends v as one JSON line; the caller holds mu or owns h.
func (h *Recorder) writeLine(v any) {
	if h.w == nil || h.err != nil {
		return
	}
	b, err := json.Marshal(v)
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
func (h *Recorder) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

// Close flushes and closes the file, reporting any write error met on the way.
func (h *Recorder) Close() error {
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

// ErrFormat is wrapped by Read when the input is not a history this version
// of locklab can read.
var ErrFormat = errors.New("not a locklab history")

// Read reads a history written by a Recorder, of this version or of
// version 1, whose faults get the fields version 2 added from their
// labels (fromV1). Input in another format, or in a version this locklab
// does not know, gives one error wrapping ErrFormat.
func Read(r io.Reader) ([]Op, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: the file is empty", ErrFormat)
	}
	var h header
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Format != Format {
		return nil, fmt.Errorf("%w: its first line is not {\"format\":%q,...} (a history from before format versions, or another file)", ErrFormat, Format)
	}
	if h.Version != 1 && h.Version != Version {
		return nil, fmt.Errorf("%w: format version %d, this locklab reads versions 1 to %d", ErrFormat, h.Version, Version)
	}
	var ops []Op
	for line := 2; sc.Scan(); line++ {
		var op Op
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			return nil, fmt.Errorf("history line %d: %w", line, err)
		}
		if h.Version == 1 {
			op = fromV1(op)
		}
		ops = append(ops, op)
	}
	return ops, sc.Err()
}

// ReadFile reads the history file at path. An error reading it names the
// file; one opening it is the os package's, which names it too.
func ReadFile(path string) ([]Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ops, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ops, nil
}

// Last is the time of the history's last event, just past it: the Return
// standing in for operations that never returned. Replies, requests and
// server events do not count: a watchdog's renewal can land after the end
// record, and the verdicts must not move with it.
func Last(ops []Op) time.Duration {
	var last time.Duration
	for _, op := range ops {
		if op.Kind == KindReply || op.Kind == KindRequest || op.Kind == KindServer {
			continue
		}
		last = max(last, op.Call, op.Return)
	}
	return last + 1
}

// Returned is op's Return, or last when it never returned.
func Returned(op Op, last time.Duration) time.Duration {
	if op.Return == NeverReturned {
		return last
	}
	return op.Return
}

// EndOf finds the End record of a history, or nil if the run never got there.
func EndOf(ops []Op) *End {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].Kind == KindEnd {
			return ops[i].End
		}
	}
	return nil
}
