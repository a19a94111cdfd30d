package harness

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/models"
)

// Verdict is one checker's judgement of one history.
type Verdict string

const (
	OK      Verdict = "ok"      // nothing wrong found
	Illegal Verdict = "illegal" // the history breaks the model: a safety violation
	Stuck   Verdict = "stuck"   // nobody got the lock within the bound
	Slow    Verdict = "slow"    // the lock sat idle between holders for too long
	Unknown Verdict = "unknown" // the checker could not decide (e.g. porcupine timed out)
)

// Checker names, as used in verdict maps, the CLI and the report.
const (
	CheckLock     = "lock"
	CheckResource = "resource"
	CheckLiveness = "liveness"
	CheckHandover = "handover"
)

// Checkers lists every checker in report order.
var Checkers = []string{CheckLock, CheckResource, CheckLiveness, CheckHandover}

// Check is one checker's verdict on a history, with a one-line reason.
type Check struct {
	Checker string  `json:"checker"`
	Verdict Verdict `json:"verdict"`
	Detail  string  `json:"detail"`
	// At is when the violation first became visible, since the start.
	At *time.Duration `json:"at_ns,omitempty"`
}

// CheckOptions are the bounds the checkers judge against.
type CheckOptions struct {
	Handover time.Duration // longest acceptable median handover; 0 means 100 ms
	Initial  int64         // stock at the start, for the resource checker
	Timeout  time.Duration // porcupine's budget per model; 0 means 30 s
}

// Checked is the outcome of every checker on one history.
type Checked struct {
	Checks []Check
	lock   *linearization
	stock  *linearization
}

// linearization is what porcupine returned, kept for the visualization.
type linearization struct {
	model porcupine.Model
	info  porcupine.LinearizationInfo
}

// CheckHistory runs every checker on ops.
func CheckHistory(ops []Op, opts CheckOptions) Checked {
	if opts.Handover == 0 {
		opts.Handover = 100 * time.Millisecond
	}
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	lock, lockLin := checkLock(ops, opts.Timeout)
	resource, stockLin := checkResource(ops, opts)
	return Checked{
		Checks: []Check{lock, resource, checkLiveness(ops), checkHandover(ops, opts.Handover)},
		lock:   lockLin,
		stock:  stockLin,
	}
}

func (c Checked) verdicts() map[string]Verdict {
	m := make(map[string]Verdict, len(c.Checks))
	for _, ch := range c.Checks {
		m[ch.Checker] = ch.Verdict
	}
	return m
}

// detect is the earliest time any checker saw a violation.
func (c Checked) detect() *time.Duration {
	var first *time.Duration
	for _, ch := range c.Checks {
		if ch.At != nil && (first == nil || *ch.At < *first) {
			first = ch.At
		}
	}
	return first
}

func (c Checked) summary() string {
	var parts []string
	for _, ch := range c.Checks {
		parts = append(parts, ch.Checker+" "+string(ch.Verdict))
	}
	return strings.Join(parts, ", ")
}

// writeVisualizations writes porcupine's HTML for the lock and the resource,
// with faults, crashes and pauses as annotations.
func (c Checked) writeVisualizations(dir string, ops []Op) error {
	notes := annotations(ops)
	for _, v := range []struct {
		lin  *linearization
		file string
	}{{c.lock, LockFile}, {c.stock, ResourceFile}} {
		if v.lin == nil {
			continue
		}
		v.lin.info.AddAnnotations(notes)
		if err := porcupine.VisualizePath(v.lin.model, v.lin.info, filepath.Join(dir, v.file)); err != nil {
			return fmt.Errorf("visualize %s: %w", v.file, err)
		}
	}
	return nil
}

// annotations turns faults and crashes into porcupine annotations.
func annotations(ops []Op) []porcupine.Annotation {
	endAt := int64(end(ops))
	var notes []porcupine.Annotation
	for _, op := range ops {
		switch op.Kind {
		case KindFault:
			tag := "faults"
			if op.Client >= 0 {
				tag = fmt.Sprintf("client %d", op.Client)
			}
			notes = append(notes, porcupine.Annotation{Tag: tag, Start: int64(op.Call), End: min(int64(op.Return), endAt),
				Description: op.Fault, Details: op.Detail, BackgroundColor: "#fde2c4"})
		case KindCrash:
			notes = append(notes, porcupine.Annotation{Tag: fmt.Sprintf("client %d", op.Client), Start: int64(op.Call),
				Description: "crash", Details: op.Detail, BackgroundColor: "#f7b7b7"})
		}
	}
	return notes
}

// holds are the intervals during which each client believed it held a key:
// from an acquire's return to the matching release's call, or the crash.
type hold struct {
	client     int
	key        string
	start, end time.Duration
	endedBy    Kind // KindRelease, KindCrash, or KindEnd when it never ended
}

func holds(ops []Op) []hold {
	sorted := append([]Op(nil), ops...)
	// A hold starts when its acquire returns and ends when its release is
	// called, so order events by those instants.
	at := func(op Op) time.Duration {
		if op.Kind == KindAcquire {
			return op.Return
		}
		return op.Call
	}
	sort.SliceStable(sorted, func(i, j int) bool { return at(sorted[i]) < at(sorted[j]) })
	type owner struct {
		client int
		key    string
	}
	open := map[owner]*hold{}
	count := map[owner]int{}
	var out []hold
	last := end(ops)
	for _, op := range sorted {
		switch {
		case op.Kind == KindAcquire && op.Outcome == models.OK:
			o := owner{op.Client, op.Key}
			if count[o] == 0 {
				open[o] = &hold{client: op.Client, key: op.Key, start: op.Return}
			}
			count[o]++
		case op.Kind == KindRelease:
			o := owner{op.Client, op.Key}
			if count[o] == 0 {
				continue
			}
			if count[o]--; count[o] == 0 {
				h := open[o]
				h.end, h.endedBy = op.Call, KindRelease
				out = append(out, *h)
				delete(open, o)
			}
		case op.Kind == KindCrash:
			for o, h := range open {
				if o.client == op.Client {
					h.end, h.endedBy = op.Call, KindCrash
					out = append(out, *h)
					delete(open, o)
					delete(count, o)
				}
			}
		}
	}
	for _, h := range open {
		h.end, h.endedBy = last, KindEnd
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

func ptr(d time.Duration) *time.Duration { return &d }

// Mismatches lists, one line each, the checkers whose verdict differs from
// what was expected; checkers missing from expected are not judged.
func Mismatches(expected, got map[string]Verdict) []string {
	var out []string
	for _, c := range Checkers {
		want, ok := expected[c]
		if ok && got[c] != want {
			out = append(out, fmt.Sprintf("%s: got %s, expected %s", c, got[c], want))
		}
	}
	return out
}
