package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/history"
)

// ReferenceDir is where, under Options.Dir, the reference runs' files go;
// each run overwrites the one before, so the last (the one that failed, if
// one did) stays.
const ReferenceDir = "reference"

// DefaultReferenceRuns is how many reference runs Options.ReferenceRuns 0
// asks for: one lucky run that misses a fault's window proves nothing.
const DefaultReferenceRuns = 3

// classify sets Kind and KindWhy on every failing check of res, telling the
// lock's own bugs from the damage the scenario's faults do to any lock of
// its kind. It decides from the history alone where it can (the
// judgement of checked, checker.Run's result on ops):
//
//  1. Any proved overlap, or release refused to a valid holder, makes the
//     illegal lock and resource verdicts own, whatever a correct lock does.
//  2. At least one overlap, and a fault explains each (a holder stalled
//     past its lease, the lock's state lost on a node while a lease was
//     on it, the reply granting a lease delayed past it): the illegal
//     verdicts are inherent, named with the fault and its remedy. Whether
//     a reference run shows the same depends on where the fault fell, not
//     on the lock.
//  3. Otherwise the reference lock (Options.Reference) goes through the
//     same scenario and seed up to Options.ReferenceRuns times, stopping
//     at the first run that fails the checker (see byReference).
//
// classify returns an error only when ctx ended.
func classify(ctx context.Context, s Scenario, opts Options, res *Result, ops []history.Op, checked checker.Result) error {
	var failing []int
	for i, c := range res.Checks {
		if checker.Failing(c.Verdict) {
			failing = append(failing, i)
		}
	}
	if len(failing) == 0 {
		return nil
	}
	j := checked.Judgement(ops)
	fault, cure := remedy(s)
	var undecided []int
	for _, i := range failing {
		c := &res.Checks[i]
		if kind, why, ok := fromHistory(*c, j, fault, cure); ok {
			c.Kind, c.KindWhy = kind, why
			continue
		}
		undecided = append(undecided, i)
	}
	if len(undecided) == 0 {
		return nil
	}
	defer untold(res, undecided, j)
	n := opts.ReferenceRuns
	if n == 0 {
		n = DefaultReferenceRuns
	}
	opts, no := referenceByKind(opts, history.EndOf(ops))
	switch {
	case no != "":
	case n < 0:
		no = "no reference run was asked for, and the history alone cannot tell"
	case opts.Reference == nil:
		no = "no reference lock to compare with, and the history alone cannot tell"
	}
	if no != "" {
		for _, i := range undecided {
			res.Checks[i].KindWhy = no
		}
		return nil
	}
	var checkers []string
	for _, i := range undecided {
		checkers = append(checkers, res.Checks[i].Checker)
	}
	refs, err := runReference(ctx, s, opts, n, checkers)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, i := range undecided {
			res.Checks[i].KindWhy = "the reference lock could not run: " + err.Error()
		}
		return nil
	}
	res.Reference, res.ReferenceRuns = refs.verdicts, refs.runs
	unexplained := j.Count(checker.Unexplained)
	for _, i := range undecided {
		c := &res.Checks[i]
		c.Kind, c.KindWhy = byReference(c.Checker, unexplained, *refs.tallies[c.Checker], n, fault, cure)
		if opts.SelfReference && c.Kind == checker.Own {
			c.Kind, c.KindWhy = "", "the lock is its own reference: "+c.KindWhy+", which only says it raced differently"
		}
	}
	return nil
}

// fromHistory decides the kind of failing check c from the history alone
// (rules 1 and 2 of classify); ok is false when it cannot.
func fromHistory(c checker.Check, j checker.Judgement, fault, cure string) (kind checker.Kind, why string, ok bool) {
	if c.Verdict != checker.Illegal || !safety(c.Checker) {
		return "", "", false
	}
	if proof, ok := j.Proof(); ok {
		return checker.Own, "no correct lock shows this: " + proof, true
	}
	if explanation, ok := j.Explanation(); ok {
		why := "any lock of this kind shows this: " + explanation
		if fault != "" {
			why += fmt.Sprintf("; %s beats any lock of this kind; remedy: %s", fault, cure)
		}
		return checker.Inherent, why, true
	}
	return "", "", false
}

// untold puts first, in the KindWhy of each failing check of undecided
// left untold, what could not be decided: for a safety check, of its first
// overlap (checker.Judgement.Undecided): which node and which reply left it
// open, so that the run says what was missing, not only that no reference
// settled it. A liveness or handover failure, which no overlap explains,
// says what the checker found.
func untold(res *Result, undecided []int, j checker.Judgement) {
	what := j.Undecided()
	for _, i := range undecided {
		c := &res.Checks[i]
		switch {
		case c.Kind != "":
		case safety(c.Checker) && c.Verdict == checker.Illegal && what != "":
			c.KindWhy = strings.TrimSuffix(what+"; "+c.KindWhy, "; ")
		case !safety(c.Checker) && c.Detail != "":
			c.KindWhy = strings.TrimSuffix(c.Checker+" "+string(c.Verdict)+" ("+c.Detail+"), and no fault of the run is known to cause it; "+c.KindWhy, "; ")
		}
	}
}

// tally is what the reference runs said of one checker.
type tally struct {
	runs, ok int
	unknown  string         // the detail of the last unknown verdict
	failed   *checker.Check // the verdict of the run that failed, if one did
	overlaps int            // the overlaps of two holds in that run's history
}

// references are the reference runs made for one classification.
type references struct {
	runs     int
	verdicts map[string]checker.Verdict // of the last run
	tallies  map[string]*tally          // by checkerName
}

// Beyond the reference: the subject's unexplained overlaps must be more
// than farTimes the reference's, and at least farMore more, to be called
// its own though the reference fails too. Timing moves a count by a few,
// not by a factor.
const (
	farTimes = 3
	farMore  = 10
)

// byReference decides the kind of a failing verdict of checker from the
// reference runs (rule 3 of classify); unexplained is how many overlaps
// of the subject's history no fault explains, n how many ok runs own needs.
//
//   - Every one of n runs ok: own.
//   - A run failed: a liveness or handover failure is inherent (untold with
//     no fault to blame), as is a safety failure with no unexplained overlap.
//     Unexplained overlaps far beyond the reference's under the same
//     schedule are own; otherwise untold.
//   - Unknown runs left fewer than n ok: untold.
func byReference(checkerName string, unexplained int, t tally, n int, fault, cure string) (checker.Kind, string) {
	const same = "of the same scenario and seed"
	switch {
	case t.failed != nil && safety(checkerName) && unexplained > 0:
		if unexplained > farTimes*t.overlaps && unexplained >= t.overlaps+farMore {
			return checker.Own, fmt.Sprintf("%d overlaps none of which a fault explains; the reference lock shows %d under the same schedule (run %d %s)",
				unexplained, t.overlaps, t.runs, same)
		}
		return "", fmt.Sprintf("%d overlap(s) none of which a fault explains, and the reference lock is %s too in run %d %s with %d: "+
			"not enough beyond it to call them the lock's own", unexplained, t.failed.Verdict, t.runs, same, t.overlaps)
	case t.failed != nil && fault == "":
		return "", fmt.Sprintf("the reference lock is %s too in run %d %s, with no fault injected: no fault shown to beat any lock of this kind", t.failed.Verdict, t.runs, same)
	case t.failed != nil:
		return checker.Inherent, fmt.Sprintf("the reference lock is %s too in run %d %s: %s beats any lock of this kind; remedy: %s",
			t.failed.Verdict, t.runs, same, fault, cure)
	case t.ok >= n:
		return checker.Own, fmt.Sprintf("the reference lock stays ok in %d of %d runs %s", t.ok, t.runs, same)
	}
	return "", fmt.Sprintf("the reference lock stays ok in only %d of %d runs %s, the others unknown (%s)", t.ok, t.runs, same, t.unknown)
}

// safety reports whether checker judges mutual exclusion (the lock) or the
// data it protects (the resource).
func safety(name string) bool { return name == checker.CheckLock || name == checker.CheckResource }

// runReference puts opts.Reference through s with the options of the run
// it is compared with, until every checker has failed in a run or been ok
// in n; a run with an unknown verdict earns one run more.
func runReference(ctx context.Context, s Scenario, opts Options, n int, checkers []string) (references, error) {
	ropts := opts
	// A live view shows the run, not the reference's runs behind it.
	ropts.Lock, ropts.ReferenceRuns, ropts.Watch = "reference", -1, nil
	if opts.Dir != "" {
		ropts.Dir = filepath.Join(opts.Dir, ReferenceDir)
	}
	refs := references{tallies: map[string]*tally{}}
	for _, name := range checkers {
		refs.tallies[name] = &tally{}
	}
	more := func() bool {
		for _, t := range refs.tallies {
			if t.failed == nil && t.ok < n && t.ok+(n+1-refs.runs) >= n {
				return true
			}
		}
		return false
	}
	for more() {
		refs.runs++
		logf(opts.Log, "%s: running the reference lock (run %d; own needs it ok in %d) to tell own failures from inherent ones", s.Name, refs.runs, n)
		ref, ops, err := runOps(ctx, s, opts.Reference, ropts)
		if err != nil {
			return references{}, err
		}
		refs.verdicts = ref.Verdicts
		overlaps := -1
		for _, name := range checkers {
			t := refs.tallies[name]
			if t.failed != nil || t.ok >= n {
				continue
			}
			t.runs++
			switch rc := referenceVerdict(ref, name); {
			case rc.Verdict == checker.OK:
				t.ok++
			case checker.Failing(rc.Verdict):
				if overlaps < 0 {
					overlaps = len(checker.Judge(ops).Overlaps)
				}
				t.failed, t.overlaps = &rc, overlaps
			default:
				t.unknown = rc.Detail
			}
		}
	}
	return refs, nil
}

// referenceVerdict is the reference's verdict on checker in r. Mutual
// exclusion is one property, seen by two checkers: once the reference's
// holders overlapped, whether that overlap also lost an update is luck of
// the interleaving, so either's illegal verdict counts for both.
func referenceVerdict(r *Result, checkerName string) checker.Check {
	rc := checkOf(r, checkerName)
	if safety(checkerName) && rc.Verdict == checker.OK {
		for _, name := range []string{checker.CheckLock, checker.CheckResource} {
			if other := checkOf(r, name); other.Verdict == checker.Illegal {
				rc = other
			}
		}
	}
	return rc
}

// checkOf finds a checker's check in r; a missing one is unknown.
func checkOf(r *Result, checkerName string) checker.Check {
	if i := slices.IndexFunc(r.Checks, func(c checker.Check) bool { return c.Checker == checkerName }); i >= 0 {
		return r.Checks[i]
	}
	return checker.Check{Checker: checkerName, Verdict: checker.Unknown, Detail: "no such check"}
}

// The workload's own faults, in KindWhy: pitfall 8's, and the small-pool scenarios' pool (Workload.Pool).
const earlyRelease, sharedPool = "releasing the lock before the commit", "a shared pool smaller than its waiters"

// remedy names the fault of s that beats any lock and what closes the hole it opens; "" when s
// has none. The most specific wins: a failover over the pause that times it, a restart over a cut.
func remedy(s Scenario) (family, cure string) {
	if s.Workload.ReleaseBeforeCommit {
		return earlyRelease, "commit, then unlock"
	}
	if s.Workload.Pool > 0 && len(s.Faults)+len(s.Failpoints) == 0 {
		return sharedPool, "a pool larger than the waiters, or a lock that waits outside the pool (try, give the connection back, retry)"
	}
	var found []fault.About
	for _, sf := range s.Faults {
		found = append(found, sf.Fault.About())
	}
	for _, fp := range s.Failpoints {
		found = append(found, fp.About())
	}
	for _, f := range fault.Families() {
		if i := slices.IndexFunc(found, func(a fault.About) bool { return a.Family == f }); i >= 0 {
			return f, found[i].Remedy
		}
	}
	return "", ""
}

// referenceByKind is opts with the reference chosen by the kind of the
// lock's hold (Options.ReferenceOf): Options.Kind, or else the kind the
// lock's own requests showed (end's footprint). When its requests showed
// contradictory things, no reference is fit to compare with, and no says
// why: the failures stay untold, never own against a lock of another kind.
func referenceByKind(opts Options, end *history.End) (_ Options, no string) {
	if opts.ReferenceOf == nil {
		return opts, ""
	}
	kind := opts.Kind
	if kind == footprint.Unknown && end != nil {
		if len(end.Ambiguous) > 0 {
			return opts, "the lock's own requests showed contradictory things (" + strings.Join(end.Ambiguous, "; ") +
				"), so no reference lock is known to be of its kind (-kind says which), and the history alone cannot tell"
		}
		if end.Footprint != nil {
			kind = end.Footprint.Kind
		}
	}
	if kind != footprint.Unknown {
		if ref := opts.ReferenceOf(kind); ref != nil {
			opts.Reference = ref
		}
	}
	return opts, ""
}
