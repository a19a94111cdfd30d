package pitfalls_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/timeline"
)

// expectCaught runs both variants of a pitfall in its scenario: the broken
// lock must get the verdicts its entry names, each failing one of the kind
// it names, and the fixed one must pass all. A correct lock's history (a
// fix's, the reference's) must never prove a bug of its own. Cases run in
// parallel, as check -parallel runs them; one that misses its verdicts is
// made again alone before it is judged, as check's suite does.
func expectCaught(t *testing.T, name string) {
	found, err := pitfalls.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	p := found[0]
	for _, c := range p.Cases() {
		t.Run(string(c.Variant)+"/"+c.Scenario, func(t *testing.T) {
			t.Parallel()
			s, err := scenarios.Lookup(c.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			ref := locks.Reference(s.Topology, s.Workload.Nested)
			opts := runner.Options{Lock: p.Name + "/" + string(c.Variant), Reference: ref.New}
			res := inParallel(t, s, c, opts)
			if missed := misses(c, res); len(missed) > 0 {
				// The run in parallel is dropped: what it found stays in the
				// log, for a reader to tell a loaded machine from a false verdict.
				for _, ch := range res.Checks {
					t.Logf("in parallel: %s: %s: %s; kind %q: %s", ch.Checker, ch.Verdict, ch.Detail, ch.Kind, ch.KindWhy)
				}
				res = alone(t, s, c, opts)
				t.Logf("made again alone; in parallel it missed: %s", strings.Join(missed, "; "))
			}
			for _, m := range misses(c, res) {
				t.Errorf("%s %s in %s: %s", p.Name, c.Variant, c.Scenario, m)
			}
			struck(t, s, c, res)
			if c.Variant == pitfalls.Broken {
				storyCause(t, p.Name, res)
			}
			faultsAsData(t, filepath.Join(res.Dir, runner.HistoryFile))
			correct := []string{filepath.Join(res.Dir, runner.ReferenceDir, runner.HistoryFile)}
			if c.Variant == pitfalls.Fixed && !c.ExcludesNothing {
				correct = append(correct, filepath.Join(res.Dir, runner.HistoryFile))
			}
			for _, path := range correct {
				if why, ok := provesOwn(t, path); ok {
					t.Errorf("the history of a correct lock, %s, proves a bug of its own: %s", path, why)
				}
			}
			for _, ch := range res.Checks {
				if ch.Kind != "" || t.Failed() {
					t.Logf("%s: %s: %s; kind %q: %s", ch.Checker, ch.Verdict, ch.Detail, ch.Kind, ch.KindWhy)
				}
			}
			if res.Reference != nil {
				t.Logf("reference %s: %v", ref.Name, res.Reference)
			}
		})
	}
}

// struck checks that a run met the fault its scenario is about (its crux):
// each failing verdict of a broken run has a violation that came while a
// crux was in effect, or within a lease after (the time a late command
// takes to land); not always the first, as a broken lock may also fail
// without its fault (pitfall 8 loses updates under plain contention, the
// slow COMMIT only makes it certain). A run
// that passes was struck by a crux, unless its case says the lock keeps
// the workload from it (Case.Missed) and the result says why. A scenario
// without a crux has no fault at all: its violation is the lock's alone.
func struck(t *testing.T, s runner.Scenario, c pitfalls.Case, res *runner.Result) {
	t.Helper()
	named := slices.ContainsFunc(s.Failpoints, func(fp failpoint.Point) bool { return fp.Crux }) ||
		slices.ContainsFunc(s.Faults, func(f runner.ScheduledFault) bool { return f.Crux })
	if !named {
		if len(s.Failpoints)+len(s.Faults) > 0 {
			t.Errorf("scenario %s has faults but names none its crux", s.Name)
		}
		return
	}
	ops, err := history.ReadFile(filepath.Join(res.Dir, runner.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	var cruxes []history.Op
	for _, op := range ops {
		if op.Crux {
			cruxes = append(cruxes, op)
		}
	}
	if c.Variant != pitfalls.Broken {
		switch {
		case len(res.Missed) > 0 && !c.Missed:
			t.Errorf("%s in %s passed without meeting its crux: %v", c.Variant, s.Name, res.Missed)
		case len(res.Missed) == 0 && c.Missed:
			t.Errorf("%s in %s was expected to keep clear of its crux (Case.Missed), and met it", c.Variant, s.Name)
		case len(res.Missed) == 0 && len(cruxes) == 0:
			t.Errorf("%s in %s: no crux in the history", c.Variant, s.Name)
		case len(res.Missed) > 0:
			t.Logf("missed: %v", res.Missed)
		}
		return
	}
	if len(cruxes) == 0 {
		t.Fatalf("the broken run in %s never met its crux", s.Name)
	}
	ttl, last := s.Workload.TTL, history.Last(ops)
	during := func(at time.Duration) bool {
		return slices.ContainsFunc(cruxes, func(op history.Op) bool {
			lasts := op.Kind == history.KindCrash || op.Effect == history.EffectLoss
			return op.Call <= at && (lasts || at <= history.Returned(op, last)+ttl)
		})
	}
	for _, ch := range res.Checks {
		if !checker.Failing(c.Expected[ch.Checker]) || ch.At == nil {
			continue
		}
		if !slices.ContainsFunc(violations(ops, ch.Checker, *ch.At), during) {
			t.Errorf("%s %s: no violation came while a crux was in effect (first at %s; %d crux ops, first %s–%s)", ch.Checker, ch.Verdict,
				*ch.At, len(cruxes), cruxes[0].Call, cruxes[0].Return)
		}
	}
}

// storyCause checks that the story of a broken run whose lock check found
// two holders names what let the second in (timeline.CauseOf), from the
// run's recorded events. Of del-release it must be the late release of the
// client the scenario paused before its DEL: that DEL freed the lock of
// the client it then shares with.
func storyCause(t *testing.T, pitfall string, res *runner.Result) {
	t.Helper()
	if !slices.ContainsFunc(res.Checks, func(c checker.Check) bool { return c.Checker == checker.CheckLock && c.Verdict == checker.Illegal }) {
		return
	}
	ops, err := history.ReadFile(filepath.Join(res.Dir, runner.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	story := timeline.Story(ops, res.Checks)
	cause, ok := timeline.CauseOf(story)
	if !ok {
		var steps []string
		for _, e := range story {
			steps = append(steps, fmt.Sprintf("%s %s", e.At, e.Text))
		}
		t.Errorf("the story names no cause of the second holder:\n  %s", strings.Join(steps, "\n  "))
		return
	}
	t.Logf("cause at %s: %s", cause.At, cause.Text)
	if server, ok := serverCauses[pitfall]; ok {
		// The servers' own events, which a watcher of the run's own
		// recorded, say what freed the lock.
		if !strings.Contains(cause.Text, server) || cause.Step != timeline.StepExpire {
			t.Errorf("the cause is %q (step %s), want the servers' word: %q", cause.Text, cause.Step, server)
		}
		return
	}
	if statement, ok := rowCauses[pitfall]; ok {
		// The statement the cause names changed the row, as the server
		// said: the request's record keeps its rows.
		if !slices.ContainsFunc(ops, func(op history.Op) bool {
			return op.Kind == history.KindRequest && op.Client == cause.Client && op.Command == statement && op.Call == cause.At && op.Rows != nil && *op.Rows >= 1
		}) {
			t.Errorf("the cause is %q (client %d at %s), want client %d's %s that changed a row, with its rows recorded", cause.Text, cause.Client, cause.At, cause.Client, statement)
		}
		return
	}
	if pitfall != "del-release" {
		return
	}
	paused := -1
	for _, op := range ops {
		if op.Crux && op.Kind == history.KindFault && op.Client >= 0 && op.Call < cause.At {
			paused = op.Client
		}
	}
	first, _, _ := checker.FirstOverlap(ops)
	if cause.Step != timeline.StepRelease || cause.Client != paused || !strings.Contains(cause.Text, fmt.Sprintf("deletes client %d's key", first.Client)) ||
		!strings.Contains(cause.Text, "late release: its DEL") {
		t.Errorf("the cause is %q (client %d, step %s), want client %d's late DEL that freed client %d's lock", cause.Text, cause.Client, cause.Step, paused, first.Client)
	}
}

// serverCauses are the words of the cause a pitfall's broken run must
// name from the servers' events: the holder's node or key deleted with its
// session or lease.
var serverCauses = map[string]string{
	"zk-pause":   "the session expired on the server",
	"etcd-pause": "ran out on the server, no client revoking it",
}

// rowCauses are the statements that a pitfall's broken run must name as
// its cause, each with the rows it changed recorded.
var rowCauses = map[string]string{"row-cleanup": "DELETE"}

// violations are the times of every violation checker can see in ops: each
// hold that began while another client held the key, each write that lost
// another's sale; for the other checkers, first, the one they report.
func violations(ops []history.Op, checkerName string, first time.Duration) []time.Duration {
	var at []time.Duration
	switch checkerName {
	case checker.CheckLock:
		hs := checker.Holds(ops)
		for i, h := range hs {
			for _, e := range hs[:i] {
				if e.Client != h.Client && e.Key == h.Key && h.Start < e.End {
					at = append(at, h.Start)
					break
				}
			}
		}
	case checker.CheckResource:
		wrote := map[int64]bool{}
		var sections []history.Op
		for _, op := range ops {
			if op.Kind == history.KindSection && op.Result == models.Wrote {
				sections = append(sections, op)
			}
		}
		slices.SortFunc(sections, func(a, b history.Op) int { return cmp.Compare(a.Return, b.Return) })
		for _, op := range sections {
			if wrote[op.Observed] {
				at = append(at, op.Return)
			}
			wrote[op.Observed] = true
		}
	}
	return append(at, first)
}

// provesOwn runs checker.ProvesOwn on the history at path, if there is one.
func provesOwn(t *testing.T, path string) (string, bool) {
	ops, err := history.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return checker.ProvesOwn(ops)
}

// faultsAsData checks that every fault of the history at path says its
// kind and what it struck as fields, which the timeline and the story draw
// from (never from its label).
func faultsAsData(t *testing.T, path string) {
	t.Helper()
	ops, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		if op.Kind == history.KindFault && (op.FaultKind == "" || op.Target.Type == "") {
			t.Errorf("fault %q at %s has kind %q and target %+v: want both as fields", op.Fault, op.Call, op.FaultKind, op.Target)
		}
	}
}

// running lets a case be made again with no other run going: runs in
// parallel hold it shared, a rerun alone holds it whole.
var running sync.RWMutex

// inParallel runs case c alongside the other cases.
func inParallel(t *testing.T, s runner.Scenario, c pitfalls.Case, opts runner.Options) *runner.Result {
	running.RLock()
	defer running.RUnlock()
	return runSettled(t, s, c, opts)
}

// alone runs case c once no other case runs, and keeps them waiting.
func alone(t *testing.T, s runner.Scenario, c pitfalls.Case, opts runner.Options) *runner.Result {
	running.Lock()
	defer running.Unlock()
	return runSettled(t, s, c, opts)
}

// newLocker is the constructor of the lock the registry names name.
func newLocker(t *testing.T, name string) harness.NewLocker {
	t.Helper()
	l, err := locks.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return l.New
}

// runSettled runs case c of scenario s. A run the machine stalled past a
// TTL is unknown, not a verdict on the lock, and so is a kind whose
// reference run stalled twice; such a run is tried again, at most twice.
func runSettled(t *testing.T, s runner.Scenario, c pitfalls.Case, opts runner.Options) *runner.Result {
	t.Helper()
	for try := 1; ; try++ {
		opts.Dir = t.TempDir()
		res, err := runner.Run(context.Background(), s, newLocker(t, c.Lock), opts)
		if err != nil {
			t.Fatal(err)
		}
		why, stalled := undecided(res)
		if late := res.Late(); late != nil {
			why, stalled = late.Checker+": "+late.Detail, true
		}
		if !stalled || try == 3 {
			return res
		}
		t.Logf("try %d: %s", try, why)
	}
}

// misses is how res differs from what case c expects: each verdict, and
// the kind of each failing one.
func misses(c pitfalls.Case, res *runner.Result) []string {
	missed := checker.Mismatches(c.Expected, res.Verdicts)
	for _, ch := range res.Checks {
		if checker.Failing(c.Expected[ch.Checker]) && ch.Kind != c.Kind {
			missed = append(missed, fmt.Sprintf("%s %s is of kind %q, expected %q (%s)", ch.Checker, ch.Verdict, ch.Kind, c.Kind, ch.KindWhy))
		}
	}
	// A fix or a control whose crux never came passed untested: it is made
	// again alone, as a missed verdict is. Under load the other clients can
	// keep client 0 from the hold its crux waits for (failover-replicated's
	// control once held twice in the run, where its crux waits for the third).
	if c.Variant != pitfalls.Broken && !c.Missed && len(res.Missed) > 0 {
		missed = append(missed, "its crux never came: "+strings.Join(res.Missed, "; "))
	}
	return missed
}

// TestCatalogue runs every pitfall's cases; -run 'TestCatalogue/NAME' runs one.
func TestCatalogue(t *testing.T) {
	for _, p := range pitfalls.Catalogue() {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			expectCaught(t, p.Name)
		})
	}
}

// undecided finds a failing verdict left without a kind, because the
// reference's verdict was unknown twice.
func undecided(res *runner.Result) (string, bool) {
	for _, c := range res.Checks {
		if checker.Failing(c.Verdict) && c.Kind == "" {
			return c.Checker + ": no kind: " + c.KindWhy, true
		}
	}
	return "", false
}
