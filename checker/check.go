// Package check judges a history: the lock checker and the resource checker
// (porcupine, with the models of package models), the liveness and handover
// checkers, throughput statistics, and porcupine's visualizations. It reads
// histories only; it never talks to Redis.
package checker

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
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
	// Kind says, for a failing verdict, whether a correct lock would have
	// failed too; empty for ok and unknown verdicts, and when it could not
	// be told.
	Kind Kind `json:"kind,omitempty"`
	// KindWhy is the one-line reason for Kind: the rule that decided it,
	// and for an inherent failure the fault and its remedy.
	KindWhy string `json:"kind_why,omitempty"`
	// Median is the handover checker's median handover, when it measured
	// one: how long a free lock sat idle before the next holder got it.
	Median *time.Duration `json:"median_ns,omitempty"`
}

// runAgain ends what the detail of an unknown verdict says when the
// machine, not the scenario, made it unknown (Late).
const runAgain = "; run again"

// Late reports whether c is unknown because the machine ran the
// harness late: a holder stalled past its TTL, a fault's injection that
// held a client too long, handovers slow only by the harness's lateness.
// Such a run says nothing of the lock; it is worth making again. The
// history's End.Late holds the stretches the machine ran late.
func (c Check) Late() bool {
	return c.Verdict == Unknown && strings.Contains(c.Detail, runAgain)
}

// Kind says whose fault a failing verdict is.
type Kind string

const (
	// Own marks a failure a correct lock would not show: the lock's own bug.
	Own Kind = "own"
	// Inherent marks damage the fault does to any lock of this kind.
	Inherent Kind = "inherent"
)

// Failing reports whether v is a verdict that gets a Kind.
func Failing(v Verdict) bool { return v == Illegal || v == Stuck || v == Slow }

// DefaultHandover is the longest median handover that is prompt, where
// Options.Handover gives none.
const DefaultHandover = 100 * time.Millisecond

// Options are the bounds the checkers judge against.
type Options struct {
	Handover time.Duration // longest acceptable median handover; 0 means DefaultHandover
	Initial  int64         // stock at the start, for the resource checker
	Timeout  time.Duration // porcupine's budget per model; 0 means 30 s
}

// Result is the outcome of every checker on one history.
type Result struct {
	Checks []Check
	lock   *linearization
	stock  *linearization
	// judgement is Judge's reading of the history, made where a checker
	// found a violation.
	judgement *Judgement
}

// linearization is what porcupine returned, kept for the visualization.
type linearization struct {
	model porcupine.Model
	info  porcupine.LinearizationInfo
}

// Run runs every checker on ops. A run that did not happen as written (its
// End names why it was spoiled) gets unknown from every checker, and a
// violation that a stall of the machine explains gets unknown too: the
// verdicts speak only of what the scenario did to the lock.
func Run(ops []history.Op, opts Options) Result {
	if opts.Handover == 0 {
		opts.Handover = DefaultHandover
	}
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	lock, lockLin := checkLock(ops, opts.Timeout)
	resource, stockLin := checkResource(ops, opts)
	r := Result{
		Checks: []Check{lock, resource, checkLiveness(ops), checkHandover(ops, opts.Handover)},
		lock:   lockLin,
		stock:  stockLin,
	}
	if e := history.EndOf(ops); e != nil && len(e.Spoiled) > 0 {
		why := "spoiled: " + strings.Join(e.Spoiled, "; ")
		for i := range r.Checks {
			r.Checks[i] = Check{Checker: r.Checks[i].Checker, Verdict: Unknown, Detail: why}
		}
		return r
	}
	if !slices.ContainsFunc(r.Checks, func(c Check) bool { return c.Verdict == Illegal }) {
		return r
	}
	// A proof counts each lease from its acquire's call, so a stalled
	// machine cannot make one: a history that holds a proved overlap or
	// refused release stays illegal, whatever the machine stalled besides.
	// The stall is still named, since it may be what set the failure off.
	j := Judge(ops)
	r.judgement = &j
	_, proved := j.Proof()
	for i, c := range r.Checks {
		if c.Verdict != Illegal {
			continue
		}
		why, ok := stalled(ops, c.Checker)
		switch {
		case !ok:
		case proved:
			r.Checks[i].Detail += " (the machine also stalled a holder, which the proof does not need: " + strings.TrimSuffix(why, runAgain) + ")"
		default:
			r.Checks[i] = Check{Checker: c.Checker, Verdict: Unknown, Detail: why + " (it found: " + c.Detail + ")"}
		}
	}
	return r
}

// Judgement is Judge's reading of ops, the history r is about: the one Run
// made where a checker found a violation, so a failing history is judged
// once.
func (r Result) Judgement(ops []history.Op) Judgement {
	if r.judgement != nil {
		return *r.judgement
	}
	return Judge(ops)
}

// Verdicts maps each checker to its verdict.
func (r Result) Verdicts() map[string]Verdict {
	m := make(map[string]Verdict, len(r.Checks))
	for _, ch := range r.Checks {
		m[ch.Checker] = ch.Verdict
	}
	return m
}

// Detect is the earliest time any checker saw a violation, or nil.
func (r Result) Detect() *time.Duration {
	var first *time.Duration
	for _, ch := range r.Checks {
		if ch.At != nil && (first == nil || *ch.At < *first) {
			first = ch.At
		}
	}
	return first
}

// Summary is one line: each checker and its verdict.
func (r Result) Summary() string {
	var parts []string
	for _, ch := range r.Checks {
		parts = append(parts, ch.Checker+" "+string(ch.Verdict))
	}
	return strings.Join(parts, ", ")
}

// Files that WriteVisualizations writes.
const (
	LockFile     = "lock.html"     // porcupine's view of the lock history
	ResourceFile = "resource.html" // porcupine's view of the critical sections
)

// WriteVisualizations writes porcupine's HTML for the lock and the resource
// into dir, with faults, crashes and pauses as annotations.
func (r Result) WriteVisualizations(dir string, ops []history.Op) error {
	notes := annotations(ops)
	for _, v := range []struct {
		lin  *linearization
		file string
	}{{r.lock, LockFile}, {r.stock, ResourceFile}} {
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
func annotations(ops []history.Op) []porcupine.Annotation {
	endAt := int64(history.Last(ops))
	var notes []porcupine.Annotation
	for _, op := range ops {
		switch op.Kind {
		case history.KindFault:
			tag := "faults"
			if op.Client >= 0 {
				tag = fmt.Sprintf("client %d", op.Client)
			}
			notes = append(notes, porcupine.Annotation{Tag: tag, Start: int64(op.Call), End: min(int64(op.Return), endAt),
				Description: op.Fault, Details: op.Detail, BackgroundColor: "#fde2c4"})
		case history.KindCrash:
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
	// took is when the command that took the key left the client
	// (history.Op.Took); 0 when the history does not say.
	took    time.Duration
	endedBy history.Kind // history.KindRelease, history.KindCrash, or history.KindEnd when it never ended
}

// leased is the earliest the hold's lease can have begun on the server:
// when the command that took the key left the client, or else when the
// acquire returned.
func (h hold) leased() time.Duration {
	if h.took > 0 && h.took < h.start {
		return h.took
	}
	return h.start
}

func holds(ops []history.Op) []hold {
	sorted := append([]history.Op(nil), ops...)
	// A hold starts when its acquire returns and ends when its release is
	// called, so order events by those instants.
	at := func(op history.Op) time.Duration {
		if op.Kind == history.KindAcquire {
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
	last := history.Last(ops)
	for _, op := range sorted {
		switch {
		case op.Kind == history.KindAcquire && op.Outcome == models.OK:
			o := owner{op.Client, op.Key}
			if count[o] == 0 {
				open[o] = &hold{client: op.Client, key: op.Key, start: op.Return, took: op.Took}
			}
			count[o]++
		case op.Kind == history.KindRelease:
			o := owner{op.Client, op.Key}
			if count[o] == 0 {
				continue
			}
			if count[o]--; count[o] == 0 {
				h := open[o]
				h.end, h.endedBy = op.Call, history.KindRelease
				out = append(out, *h)
				delete(open, o)
			}
		case op.Kind == history.KindCrash:
			for o, h := range open {
				if o.client == op.Client {
					h.end, h.endedBy = op.Call, history.KindCrash
					out = append(out, *h)
					delete(open, o)
					delete(count, o)
				}
			}
		}
	}
	for _, h := range open {
		h.end, h.endedBy = last, history.KindEnd
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
