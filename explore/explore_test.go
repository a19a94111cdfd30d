package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore/schedule"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/program"
	"github.com/locklab/locklab/runner"
)

// fakeRun is a runner.Run that fails the lock checker with an own
// violation exactly when the scenario keeps a fault it names.
func fakeRun(culprits ...string) func(context.Context, runner.Scenario, harness.NewLocker, runner.Options) (*runner.Result, error) {
	return func(_ context.Context, s runner.Scenario, _ harness.NewLocker, opts runner.Options) (*runner.Result, error) {
		res := &runner.Result{Scenario: s.Name, Seed: opts.Seed}
		c := checker.Check{Checker: checker.CheckLock, Verdict: checker.OK}
		for _, culprit := range culprits {
			if strings.Contains(s.Description, culprit) {
				c = checker.Check{Checker: checker.CheckLock, Verdict: checker.Illegal, Kind: checker.Own}
			}
		}
		res.Checks = []checker.Check{c, {Checker: checker.CheckLiveness, Verdict: checker.OK}}
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, err
		}
		return res, os.WriteFile(filepath.Join(opts.Dir, "result.json"), []byte("{}\n"), 0o644)
	}
}

// TestRunRefusesAnUnknownKind: a fault kind explore does not know is an
// error before any run.
func TestRunRefusesAnUnknownKind(t *testing.T) {
	if _, err := Run(context.Background(), Config{New: locks.Reference(cluster.Single, false).New, Faults: []string{"bogus"}, run: fakeRun()}); err == nil {
		t.Error("Run took an unknown fault kind")
	}
}

func TestShrink(t *testing.T) {
	// A seed whose plan drew three faults; the fake fails the lock when the
	// middle one is kept.
	var p schedule.Plan
	for seed := int64(1); len(p.Faults) != 3 || p.Faults[1].What == p.Faults[0].What || p.Faults[1].What == p.Faults[2].What; seed++ {
		p = schedule.Draw(cluster.Single, false, seed)
	}
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
		Replay: &schedule.Replay{Seed: p.Seed}, Dir: dir, run: fakeRun(p.Faults[1].What)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Own != 1 || rep.First == nil {
		t.Fatalf("report %+v, want one own run", rep)
	}
	// A replay is not shrunk; an exploration that draws the seed is.
	e := &explorer{cfg: Config{run: fakeRun(p.Faults[1].What), New: locks.Reference(cluster.Single, false).New}, rep: &Report{}, scratch: t.TempDir()}
	first, err := e.try(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	small, o, reruns, cut := e.shrink(context.Background(), p, first, failure{checker.CheckLock, checker.Illegal})
	if got := small.Replay(); !slices.Equal(got.Keep, []int{1}) || cut {
		t.Errorf("shrunk to %s (cut short: %t), want only fault 1 kept", got, cut)
	}
	if reruns != 3 {
		t.Errorf("%d reruns, want 3 (one per fault)", reruns)
	}
	if len(o.own) != 1 {
		t.Errorf("the smallest run's own checks: %v", o.own)
	}
	if _, err := os.Stat(filepath.Join(dir, ReplayFolderName("fake", cluster.Single), "result.json")); err != nil {
		t.Errorf("the replay's folder was not kept: %v", err)
	}
}

// TestShrinkToNothing checks that a violation no fault causes shrinks to
// no fault at all, one rerun per drawn fault.
func TestShrinkToNothing(t *testing.T) {
	p := schedule.Draw(cluster.Single, false, 1)
	e := &explorer{cfg: Config{run: fakeRun("clients"), New: locks.Reference(cluster.Single, false).New}, rep: &Report{}, scratch: t.TempDir()}
	first, err := e.try(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	small, _, reruns, _ := e.shrink(context.Background(), p, first, failure{checker.CheckLock, checker.Illegal})
	if got := small.Replay(); got.Keep == nil || len(got.Keep) != 0 {
		t.Errorf("shrunk to %s, want no fault kept", got)
	}
	if reruns != len(p.Faults) || reruns > maxShrink {
		t.Errorf("%d reruns for %d faults", reruns, len(p.Faults))
	}
}

// TestShrinkCutShort: a shrink the end of the exploration cuts short
// keeps the smallest plan it saw fail alike, and says it was cut short.
func TestShrinkCutShort(t *testing.T) {
	var p schedule.Plan
	for seed := int64(1); len(p.Faults) != 3 || p.Faults[1].What == p.Faults[0].What || p.Faults[1].What == p.Faults[2].What; seed++ {
		p = schedule.Draw(cluster.Single, false, seed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	run := func(ctx context.Context, s runner.Scenario, l harness.NewLocker, opts runner.Options) (*runner.Result, error) {
		if calls++; calls == 3 {
			cancel() // the time runs out during the shrink's second rerun
			return nil, ctx.Err()
		}
		return fakeRun(p.Faults[1].What)(ctx, s, l, opts)
	}
	e := &explorer{cfg: Config{run: run, New: locks.Reference(cluster.Single, false).New}, rep: &Report{}, scratch: t.TempDir()}
	first, err := e.try(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	small, o, reruns, cut := e.shrink(ctx, p, first, failure{checker.CheckLock, checker.Illegal})
	// The first rerun dropped fault 2 and still failed; the second was cut.
	if got := small.Replay(); !slices.Equal(got.Keep, []int{0, 1}) || !cut || reruns != 2 || !o.showsOwn(failure{checker.CheckLock, checker.Illegal}) {
		t.Errorf("shrunk to %s in %d reruns (cut short: %t), want faults 0 and 1 kept in 2, cut short", got, reruns, cut)
	}
}

// TestRunStopsAtFirstOwn checks StopAtFirst, and StopWhen, which stops at
// the first bug it accepts and at no other.
func TestRunStopsAtFirstOwn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		stops bool
	}{
		{"stop at first", Config{StopAtFirst: true}, true},
		{"run on", Config{}, false},
		{"stop when accepted", Config{StopWhen: func(b Bug) bool { return b.Signature == "lock illegal · no fault" }}, true},
		{"stop when not accepted", Config{StopWhen: func(Bug) bool { return false }}, false},
	} {
		dir := t.TempDir()
		cfg := tc.cfg
		cfg.Lock, cfg.New, cfg.Runs, cfg.Seed, cfg.Dir, cfg.run = "fake", locks.Reference(cluster.Single, false).New, 5, 3, dir, fakeRun("clients")
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := 5
		if tc.stops {
			want = 1
		}
		if rep.Runs != want || rep.Own != want || rep.FirstOwnS == nil || rep.Replay == "" {
			t.Errorf("%s: report %+v, want %d own runs", tc.name, rep, want)
		}
		// Every run fails with no fault at all: one bug, every run its.
		if len(rep.Bugs) != 1 || rep.Bugs[0].Runs != want || rep.Bugs[0].Signature != "lock illegal · no fault" {
			t.Errorf("%s: bugs %+v, want one of %d runs", tc.name, rep.Bugs, want)
		}
		if _, err := os.Stat(filepath.Join(dir, FolderName("fake", cluster.Single, 1), "result.json")); err != nil {
			t.Errorf("%s: the bug's folder was not kept: %v", tc.name, err)
		}
	}
}

// TestWatchdogExplored is a real exploration: a correct lock shows no own
// violation in a few runs.
func TestWatchdogExplored(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	l, err := locks.Lookup("token-watchdog")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Lock: l.Name, New: l.New, Reference: locks.Reference(cluster.Single, false).New,
		Runs: 3, Seed: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 3 {
		t.Errorf("%d runs, want 3", rep.Runs)
	}
	if rep.Own != 0 {
		t.Errorf("own violation of a correct lock: %+v (replay %s)", rep.First, rep.Replay)
	}
}

// TestFlakyNotOwn checks that an own violation the same schedule does not
// show again is counted apart and does not stop the exploration.
func TestFlakyNotOwn(t *testing.T) {
	calls := 0
	fails, passes := fakeRun("clients"), fakeRun()
	alternate := func(ctx context.Context, s runner.Scenario, l harness.NewLocker, opts runner.Options) (*runner.Result, error) {
		calls++
		if calls%2 == 1 {
			return fails(ctx, s, l, opts)
		}
		return passes(ctx, s, l, opts)
	}
	rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
		Runs: 3, Seed: 3, run: alternate})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 3 || rep.Own != 0 || rep.Flaky != 3 || rep.FirstOwnS != nil || len(rep.Bugs) != 0 {
		t.Errorf("report %+v, want 3 flaky runs and no own one", rep)
	}
}

// TestLateMadeAgain checks that a run, or the rerun confirming a
// bug, whose verdict the machine left unknown is made again, up to
// lateTries times in all, and counted once.
func TestLateMadeAgain(t *testing.T) {
	late := checker.Check{Checker: checker.CheckLock, Verdict: checker.Unknown, Detail: "a holder stalled; run again"}
	for _, tc := range []struct {
		name   string
		script []string // what each call returns in turn, then "own"
		want   func(*Report) bool
	}{
		{"first run late, then own", []string{"late", "own", "own"},
			func(r *Report) bool { return r.Again == 1 && len(r.Bugs) == 1 && r.Unknown == 0 }},
		{"confirming rerun late, then own", []string{"own", "late", "own"},
			func(r *Report) bool { return r.Again == 1 && len(r.Bugs) == 1 && r.Flaky == 0 }},
		{"late every time", []string{"late", "late", "late"},
			func(r *Report) bool { return r.Again == lateTries-1 && r.Unknown == 1 && len(r.Bugs) == 0 }},
		{"confirming rerun late every time", []string{"own", "late", "late", "late"},
			func(r *Report) bool { return r.Again == lateTries-1 && r.Flaky == 1 && len(r.Bugs) == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			own := fakeRun("clients")
			scripted := func(ctx context.Context, s runner.Scenario, l harness.NewLocker, opts runner.Options) (*runner.Result, error) {
				calls++
				res, err := own(ctx, s, l, opts)
				if calls <= len(tc.script) && tc.script[calls-1] == "late" {
					res.Checks[0] = late
				}
				return res, err
			}
			rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
				Runs: 1, Seed: 3, run: scripted})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(rep) {
				t.Errorf("after %d calls: again %d, unknown %d, flaky %d, bugs %d", calls, rep.Again, rep.Unknown, rep.Flaky, len(rep.Bugs))
			}
		})
	}
}

func TestProgress(t *testing.T) {
	for _, tc := range []struct {
		terminal bool
		want     []string
	}{
		{false, []string{"run 0 (replay ", "): ok\n", "run 1 (replay "}}, // numbered as in the runs file
		{true, []string{"\r\033[Kruns 1 of 2, bugs 0 (own runs 0), inherent 0, unknown 0", "\r\033[Kruns 2 of 2, bugs 0 (own runs 0), inherent 0, unknown 0\n"}},
	} {
		var b strings.Builder
		_, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
			Runs: 2, Progress: &b, Terminal: tc.terminal, run: fakeRun()})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("terminal %v: progress %q lacks %q", tc.terminal, b.String(), w)
			}
		}
	}
}

// Handmade faults, so that the tests below do not hang on what Schedule
// happens to draw.
func failpointFault(kind, name string, a failpoint.Action) schedule.Fault {
	return schedule.Fault{Kind: kind, What: kind + " at " + name,
		Failpoints: []failpoint.Point{{Name: name, Client: failpoint.AnyClient, Action: a, Optional: true}}}
}

var (
	slowWork     = failpointFault("slow-work", failpoint.CriticalSection, failpoint.Sleep(500*time.Millisecond))
	lostRelease  = failpointFault("drop-reply", failpoint.AfterCommand(failpoint.PhaseRelease, 1), failpoint.DropReply())
	lostBefore   = failpointFault("drop-reply", failpoint.BeforeCommand(failpoint.PhaseRelease, 1), failpoint.DropReply())
	pauseRelease = failpointFault("pause-release", failpoint.BeforeCommand(failpoint.PhaseRelease, 1), failpoint.Pause(time.Second))
	commandPause = failpointFault("command-pause", failpoint.BeforeCommand(failpoint.PhaseRelease, 1), failpoint.Pause(time.Second))
	crashTook    = failpointFault("crash-acquire", failpoint.AfterTook, failpoint.Crash())
	skew         = schedule.Fault{Kind: "clock-skew", What: "clock skew",
		Scheduled: []runner.ScheduledFault{{At: 100 * time.Millisecond, For: 500 * time.Millisecond, Fault: fault.ClockSkew{Client: 1, By: time.Second}}}}
	failover = schedule.Fault{Kind: "failover", What: "failover", Failpoints: []failpoint.Point{
		{Name: failpoint.BeforeAcquire, Action: failpoint.Inject(fault.CutReplication{Replicas: []int{1}}, failpoint.WholeRun)},
		{Name: failpoint.CriticalSection, Action: failpoint.Inject(fault.KillMaster{}, 0)},
	}}
)

func handPlan(seed int64, faults ...schedule.Fault) schedule.Plan {
	return schedule.Plan{Seed: seed, Topology: cluster.Single, Workload: schedule.Draw(cluster.Single, false, 1).Workload, Faults: faults}
}

// TestSignatureNamesOnlyWhatStruck: a drawn fault whose failpoints never
// fired did nothing to the lock, and a bug's name leaves it out; so does
// the slow work of a fault's story when it never came.
func TestSignatureNamesOnlyWhatStruck(t *testing.T) {
	lock := failure{checker.CheckLock, checker.Illegal}
	cutRenewal := schedule.Fault{Kind: "cut-renewal", What: "cut renewal", Failpoints: []failpoint.Point{
		{Name: failpoint.CriticalSection, Action: failpoint.Sleep(time.Second)},
		{Name: failpoint.BeforeCommand(failpoint.PhaseBackground, 1), Action: failpoint.Crash()},
	}}
	for _, tc := range []struct {
		faults []schedule.Fault
		fired  []bool
		want   string
	}{
		{[]schedule.Fault{slowWork, pauseRelease}, []bool{true, false}, "lock illegal · slow work in critical section"},
		{[]schedule.Fault{slowWork, pauseRelease}, []bool{false, true}, "lock illegal · pause before release command 1"},
		{[]schedule.Fault{skew, pauseRelease}, []bool{false}, "lock illegal · clock skew"},
		{[]schedule.Fault{cutRenewal}, []bool{true, true}, "lock illegal · cut renewal before background command 1 + slow work in critical section"},
		{[]schedule.Fault{cutRenewal}, []bool{true, false}, "lock illegal · slow work in critical section"},
		{[]schedule.Fault{cutRenewal}, []bool{false, true}, "lock illegal · cut renewal before background command 1"},
		{[]schedule.Fault{slowWork, pauseRelease}, []bool{true}, "lock illegal · pause before release command 1 + slow work in critical section"}, // an older history says less: what it does not say counts as fired
	} {
		if got := signature(lock, marksOf(tc.faults, tc.fired)); got != tc.want {
			t.Errorf("signature(%v, fired %v) = %q, want %q", tc.faults, tc.fired, got, tc.want)
		}
	}
}

func TestSignature(t *testing.T) {
	lock := failure{checker.CheckLock, checker.Illegal}
	for _, tc := range []struct {
		f      failure
		faults []schedule.Fault
		want   string
	}{
		{lock, []schedule.Fault{slowWork}, "lock illegal · slow work in critical section"},
		{lock, []schedule.Fault{lostRelease}, "lock illegal · lost reply of release command 1"},
		{lock, []schedule.Fault{lostBefore}, "lock illegal · lost reply of release command 1"},
		{lock, []schedule.Fault{pauseRelease}, "lock illegal · pause before release command 1"},
		{lock, []schedule.Fault{commandPause}, "lock illegal · pause before release command 1"},
		{lock, []schedule.Fault{crashTook}, "lock illegal · crash after the acquire command that took the key"},
		{lock, []schedule.Fault{skew}, "lock illegal · clock skew"},
		{lock, []schedule.Fault{failover}, "lock illegal · failover"},
		{lock, []schedule.Fault{slowWork, skew, slowWork}, "lock illegal · clock skew + slow work in critical section"},
		{lock, nil, "lock illegal · no fault"},
		{failure{checker.CheckLiveness, checker.Stuck}, []schedule.Fault{crashTook}, "liveness stuck · crash after the acquire command that took the key"},
	} {
		if got := signature(tc.f, marksOf(tc.faults, nil)); got != tc.want {
			t.Errorf("signature(%s, %v) = %q, want %q", tc.f, tc.faults, got, tc.want)
		}
	}
	own := []checker.Check{
		{Checker: checker.CheckLiveness, Verdict: checker.Stuck, Kind: checker.Own},
		{Checker: checker.CheckResource, Verdict: checker.Illegal, Kind: checker.Own},
		{Checker: checker.CheckLock, Verdict: checker.Illegal, Kind: checker.Own},
	}
	for n, want := range []failure{{checker.CheckLiveness, checker.Stuck}, {checker.CheckResource, checker.Illegal}, lock} {
		if got := failureOf(own[:n+1]); got != want {
			t.Errorf("failureOf(%v) = %s, want %s", own[:n+1], got, want)
		}
	}
}

// call is one call of a scripted run.
type call struct {
	scenario  string
	reference bool // the run may compare with a reference run
}

// scriptedRun is a runner.Run that fails the lock checker as the lock's
// own exactly when fails says so of the scenario, and records every call.
func scriptedRun(calls *[]call, fails func(runner.Scenario) bool) func(context.Context, runner.Scenario, harness.NewLocker, runner.Options) (*runner.Result, error) {
	return func(_ context.Context, s runner.Scenario, _ harness.NewLocker, opts runner.Options) (*runner.Result, error) {
		*calls = append(*calls, call{scenario: s.Name, reference: opts.ReferenceRuns >= 0})
		c := checker.Check{Checker: checker.CheckLock, Verdict: checker.OK}
		if fails(s) {
			c = checker.Check{Checker: checker.CheckLock, Verdict: checker.Illegal, Kind: checker.Own}
		}
		res := &runner.Result{Scenario: s.Name, Seed: opts.Seed, Checks: []checker.Check{c, {Checker: checker.CheckLiveness, Verdict: checker.OK}}}
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, err
		}
		return res, os.WriteFile(filepath.Join(opts.Dir, "result.json"), []byte("{}\n"), 0o644)
	}
}

// armed reports whether s arms a failpoint with action a at a name that
// has the prefix.
func armed(s runner.Scenario, prefix string, a failpoint.ActionKind) bool {
	return slices.ContainsFunc(s.Failpoints, func(fp failpoint.Point) bool {
		return strings.HasPrefix(fp.Name, prefix) && fp.Action.Kind == a
	})
}

// TestBugs runs handmade plans one by one through a lock with two bugs:
// slow work and a lost release reply each make it fail the lock checker.
// Each bug is confirmed and shrunk once; a later run that drew a known
// bug's faults is counted to it with no rerun, and a shrink that ends on
// a known signature merges into that bug.
func TestBugs(t *testing.T) {
	twoBugs := func(s runner.Scenario) bool {
		return armed(s, failpoint.CriticalSection, failpoint.ActionSleep) ||
			armed(s, "after release", failpoint.ActionDrop) || armed(s, "before release", failpoint.ActionDrop) ||
			armed(s, "before release", failpoint.ActionPause)
	}
	type want struct {
		bugs   []string // signatures
		runs   []int    // each bug's runs
		reruns int      // confirming reruns, without reference
		calls  int      // runs, confirming reruns and shrink reruns
	}
	for _, tc := range []struct {
		name  string
		plans []schedule.Plan
		want  want
	}{
		{"grouped", []schedule.Plan{
			handPlan(11, slowWork, skew),        // bug 1, shrunk to slow work: 1 run, 1 confirm, 2 shrinks
			handPlan(12, lostRelease),           // bug 2: 1 run, 1 confirm, 1 shrink
			handPlan(13, skew, slowWork),        // bug 1 again: no rerun
			handPlan(14, lostBefore),            // bug 2 again, the same command's lost reply: no rerun
			handPlan(15, skew),                  // ok
			handPlan(16, lostRelease, slowWork), // both known: counted once, to bug 1
		}, want{
			bugs:   []string{"lock illegal · slow work in critical section", "lock illegal · lost reply of release command 1"},
			runs:   []int{3, 2},
			reruns: 2,
			calls:  6 + 2 + 3,
		}},
		{"merged", []schedule.Plan{
			handPlan(21, pauseRelease),       // bug 1: 1 run, 1 confirm, 1 shrink
			handPlan(22, commandPause, skew), // another kind, so not known: 1 run, 1 confirm, 2 shrinks, then merged
			handPlan(23, commandPause),       // known now by its merged faults: no rerun
		}, want{
			bugs:   []string{"lock illegal · pause before release command 1"},
			runs:   []int{3},
			reruns: 2,
			calls:  3 + 2 + 3,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []call
			dir := t.TempDir()
			e := &explorer{cfg: Config{Lock: "fake", Topology: cluster.Single, Dir: dir, run: scriptedRun(&calls, twoBugs)},
				rep: &Report{Bugs: []Bug{}}, scratch: t.TempDir(), start: time.Now()}
			for _, p := range tc.plans {
				if err := e.one(context.Background(), p, true); err != nil {
					t.Fatalf("plan %d: %v", p.Seed, err)
				}
			}
			var sigs []string
			var runs []int
			for _, b := range e.rep.Bugs {
				sigs, runs = append(sigs, b.Signature), append(runs, b.Runs)
			}
			if !slices.Equal(sigs, tc.want.bugs) || !slices.Equal(runs, tc.want.runs) {
				t.Errorf("bugs %q with runs %v, want %q with %v", sigs, runs, tc.want.bugs, tc.want.runs)
			}
			reruns := 0
			for _, c := range calls {
				if !c.reference {
					reruns++
				}
			}
			if reruns != tc.want.reruns || len(calls) != tc.want.calls {
				t.Errorf("%d calls, %d of them confirming reruns; want %d and %d: %v", len(calls), reruns, tc.want.calls, tc.want.reruns, calls)
			}
			own := 0
			for _, r := range tc.want.runs {
				own += r
			}
			if e.rep.Own != own || e.rep.Runs != len(tc.plans) {
				t.Errorf("%d own of %d runs, want %d of %d", e.rep.Own, e.rep.Runs, own, len(tc.plans))
			}
			for i, b := range e.rep.Bugs {
				want := filepath.Join(dir, FolderName("fake", cluster.Single, i+1))
				if b.ReportDir != want {
					t.Errorf("bug %d's folder %q, want %q", i+1, b.ReportDir, want)
				}
				if _, err := os.Stat(filepath.Join(want, "result.json")); err != nil {
					t.Errorf("bug %d's run was not kept: %v", i+1, err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, FolderName("fake", cluster.Single, len(e.rep.Bugs)+1))); err == nil {
				t.Errorf("a folder for bug %d, which was not found", len(e.rep.Bugs)+1)
			}
		})
	}
}

// TestBugsExplored checks, over drawn schedules, that every own run is
// counted to exactly one bug, and that a bug is confirmed by one rerun only
// when its run looked new.
func TestBugsExplored(t *testing.T) {
	var calls []call
	rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
		Runs: 60, Seed: 5, run: scriptedRun(&calls, func(s runner.Scenario) bool {
			return armed(s, failpoint.CriticalSection, failpoint.ActionSleep)
		})})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, b := range rep.Bugs {
		sum += b.Runs
	}
	reruns := 0
	for _, c := range calls {
		if !c.reference {
			reruns++
		}
	}
	if rep.Own == 0 || sum != rep.Own {
		t.Errorf("%d own runs, %d counted to bugs %+v", rep.Own, sum, rep.Bugs)
	}
	// A bug's first run is confirmed, and so is a run shrunk into a known
	// bug; a run that drew a known bug's faults is not.
	if reruns < len(rep.Bugs) || reruns >= rep.Own {
		t.Errorf("%d confirming reruns for %d own runs in %d bugs", reruns, rep.Own, len(rep.Bugs))
	}
	for _, b := range rep.Bugs {
		if !strings.Contains(b.Signature, "in critical section") {
			t.Errorf("bug %q: the lock fails only under a sleep in its critical section", b.Signature)
		}
	}
}

// TestReportJSON checks the fields `check explore -json` prints, and that
// first_own_s ends with the run that showed the bug, before its confirming
// rerun.
func TestReportJSON(t *testing.T) {
	const rerun = 300 * time.Millisecond
	fails := fakeRun("clients")
	slowRerun := func(ctx context.Context, s runner.Scenario, l harness.NewLocker, opts runner.Options) (*runner.Result, error) {
		if opts.ReferenceRuns < 0 {
			time.Sleep(rerun) // stands for the length of a real rerun
		}
		return fails(ctx, s, l, opts)
	}
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
		Runs: 3, Seed: 3, Dir: dir, run: slowRerun})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Own        int      `json:"own"`
		FirstOwnS  *float64 `json:"first_own_s"`
		Replay     string   `json:"replay"`
		ReportDir  string   `json:"report_dir"`
		WallS      float64  `json:"wall_s"`
		RunsPerMin float64  `json:"runs_per_min"`
		Bugs       []struct {
			Signature string          `json:"signature"`
			FirstS    *float64        `json:"first_s"`
			Runs      int             `json:"runs"`
			Replay    string          `json:"replay"`
			ReportDir string          `json:"report_dir"`
			Checks    []checker.Check `json:"checks"`
		} `json:"bugs"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Own != 3 || len(got.Bugs) != 1 || got.FirstOwnS == nil || got.WallS < rerun.Seconds() {
		t.Fatalf("report %s", b)
	}
	bug := got.Bugs[0]
	if bug.Signature == "" || bug.FirstS == nil || bug.Runs != 3 || bug.Replay == "" || bug.ReportDir == "" || len(bug.Checks) == 0 {
		t.Errorf("bug %+v lacks a field", bug)
	}
	if bug.Replay != got.Replay || bug.ReportDir != got.ReportDir || *bug.FirstS != *got.FirstOwnS {
		t.Errorf("the first bug %+v and the report's replay %q, folder %q, first own %v differ", bug, got.Replay, got.ReportDir, *got.FirstOwnS)
	}
	if *got.FirstOwnS >= rerun.Seconds() {
		t.Errorf("first own at %.3fs counts the confirming rerun of %s", *got.FirstOwnS, rerun)
	}
	if want := 3 / got.WallS * 60; got.RunsPerMin != want {
		t.Errorf("runs per minute %.1f, want %.1f", got.RunsPerMin, want)
	}
}

// TestFoldersCleared checks that an exploration clears the bug folders an
// earlier one of the same lock left, and nothing else.
func TestFoldersCleared(t *testing.T) {
	dir := t.TempDir()
	stale := []string{FolderName("fake", cluster.Single, 2), FolderName("fake", cluster.Single, 10)}
	kept := []string{FolderName("fake", cluster.Redlock, 2), FolderName("other", cluster.Single, 1), "explore-fake-single-notes", ReplayFolderName("fake", cluster.Single)}
	for _, name := range slices.Concat(stale, kept) {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
		Runs: 1, Dir: dir, run: fakeRun()}); err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s left", name)
		}
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s removed: %v", name, err)
		}
	}
}

// TestParallelJudgesLikeInTurn: made four at a time, an exploration draws
// the same plans, judges them in the same order and reports the same bugs,
// line for line, as one made in turn.
func TestParallelJudgesLikeInTurn(t *testing.T) {
	explore := func(parallel int) (*Report, string) {
		var progress bytes.Buffer
		rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
			Runs: 40, Seed: 5, Parallel: parallel, Progress: &progress, run: slowSectionIsOwn})
		if err != nil {
			t.Fatal(err)
		}
		return rep, progress.String()
	}
	inTurn, inTurnLines := explore(1)
	parallel, parallelLines := explore(4)
	if inTurn.Own == 0 || len(inTurn.Bugs) == 0 {
		t.Fatalf("the fake found no bug in turn: %+v", inTurn)
	}
	if parallelLines != inTurnLines {
		t.Errorf("in parallel the progress differs:\n%s\nin turn:\n%s", parallelLines, inTurnLines)
	}
	if parallel.Runs != inTurn.Runs || parallel.Own != inTurn.Own || len(parallel.Bugs) != len(inTurn.Bugs) {
		t.Errorf("in parallel %d runs, %d own, %d bugs; in turn %d, %d, %d",
			parallel.Runs, parallel.Own, len(parallel.Bugs), inTurn.Runs, inTurn.Own, len(inTurn.Bugs))
	}
}

// TestReplayKeepsItsFolder: a replay's run folder is kept whatever the run
// showed, since the user asked to see it.
func TestReplayKeepsItsFolder(t *testing.T) {
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
		Replay: &schedule.Replay{Seed: 1}, Dir: dir, run: fakeRun()})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, ReplayFolderName("fake", cluster.Single))
	if rep.Own != 0 || rep.ReportDir != want {
		t.Fatalf("report %+v, want no bug and the folder %s", rep, want)
	}
	if _, err := os.Stat(filepath.Join(want, "result.json")); err != nil {
		t.Errorf("the replay's folder was not kept: %v", err)
	}
}

// TestEndsOnTime: runs under way when the time runs out are stopped, not
// waited for, and counted as cut short, in no outcome; the exploration
// ends with no error.
func TestEndsOnTime(t *testing.T) {
	for _, parallel := range []int{1, 3} {
		var stopped atomic.Int32
		slow := func(ctx context.Context, s runner.Scenario, newLocker harness.NewLocker, opts runner.Options) (*runner.Result, error) {
			select {
			case <-ctx.Done():
				stopped.Add(1)
				return nil, ctx.Err()
			case <-time.After(300 * time.Millisecond): // the run's own work
			}
			return fakeRun()(ctx, s, newLocker, opts)
		}
		rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
			Time: 500 * time.Millisecond, Parallel: parallel, run: slow})
		if err != nil {
			t.Fatalf("parallel %d: %v", parallel, err)
		}
		if stopped.Load() == 0 || int(stopped.Load()) != rep.CutShort || rep.Runs == 0 || rep.WallS > 2 {
			t.Errorf("parallel %d: %d runs stopped; report: %d runs, %d cut short, %.1f s", parallel, stopped.Load(), rep.Runs, rep.CutShort, rep.WallS)
		}
	}
}

// TestEndedRunsJudgedAtTheEnd: runs made at once that ended before the
// time ran out are judged, though a run before them in the order was still
// under way; only that one is cut short.
func TestEndedRunsJudgedAtTheEnd(t *testing.T) {
	var calls, stopped atomic.Int32
	run := func(ctx context.Context, s runner.Scenario, newLocker harness.NewLocker, opts runner.Options) (*runner.Result, error) {
		if calls.Add(1) == 1 { // run 0 lasts until the end
			<-ctx.Done()
			stopped.Add(1)
			return nil, ctx.Err()
		}
		return fakeRun()(ctx, s, newLocker, opts)
	}
	rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
		Time: 300 * time.Millisecond, Parallel: 3, run: run})
	if err != nil {
		t.Fatal(err)
	}
	if rep.CutShort != int(stopped.Load()) || rep.Runs == 0 || rep.Runs+rep.CutShort != int(calls.Load()) {
		t.Errorf("%d runs made, %d stopped; report: %d runs, %d cut short", calls.Load(), stopped.Load(), rep.Runs, rep.CutShort)
	}
}

// TestRunsShareTheLease: every run of an exploration, its reruns too, is
// timed against one lease: the one given, or the one the first run
// learned (here the fake learns it, as runner.Run does from a lock
// program's requests). The schedules reach the runner as drawn, timed
// against their own TTL, so that a replay draws what it drew; the runner
// stretches them. The report names the lease.
func TestRunsShareTheLease(t *testing.T) {
	learned := footprint.Footprint{Lease: time.Second, LeaseFrom: "SET app:lock … PX 1000 NX"}
	for _, tc := range []struct {
		name  string
		given time.Duration
		want  string
	}{
		{"learned", 0, "the learned lease 1000 ms (from SET app:lock … PX 1000 NX)"},
		{"given", 2 * time.Second, "the given lease 2000 ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var leases []*footprint.Lease
			run := func(ctx context.Context, s runner.Scenario, l harness.NewLocker, opts runner.Options) (*runner.Result, error) {
				if s.Workload.TTL != 200*time.Millisecond {
					t.Errorf("a schedule reached the runner with TTL %s, not as drawn", s.Workload.TTL)
				}
				leases = append(leases, opts.Lease)
				opts.Lease.Learn(learned, s.Workload.TTL)
				return fakeRun("clients")(ctx, s, l, opts)
			}
			rep, err := RunWith(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
				Runs: 3, Seed: 3, Lease: tc.given, Dir: t.TempDir()}, run)
			if err != nil {
				t.Fatal(err)
			}
			if len(leases) < 3 || slices.ContainsFunc(leases, func(l *footprint.Lease) bool { return l != leases[0] }) {
				t.Errorf("%d runs, not all with one lease", len(leases))
			}
			if rep.Lease != tc.want {
				t.Errorf("report's lease %q, want %q", rep.Lease, tc.want)
			}
		})
	}
}

// TestRealEndsOnTime is TestEndsOnTime with real runs: a lock whose bug
// comes at once, so that confirming and shrinking reruns are under way
// when the time runs out. The exploration ends within its time and a
// run's teardown, and a run it stopped is counted in no outcome and
// listed in the runs file as cut short, never ok.
func TestRealEndsOnTime(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	l, err := locks.Lookup("del-release")
	if err != nil {
		t.Fatal(err)
	}
	const budget, grace = 4 * time.Second, endGrace
	dir := t.TempDir()
	start := time.Now()
	rep, err := Run(context.Background(), Config{Lock: l.Name, New: l.New, Time: budget, Seed: 2, Dir: dir, Parallel: 2})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took > budget+grace {
		t.Errorf("a %s exploration took %s", budget, took.Round(time.Millisecond))
	}
	if rep.CutShort == 0 {
		t.Errorf("no run cut short in %s: %+v", budget, rep)
	}
	b, err := os.ReadFile(rep.RunsFile)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r RunRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("runs file line %q: %v", line, err)
		}
		counts[r.Outcome]++
	}
	if counts[CutShortOutcome] != rep.CutShort {
		t.Errorf("runs file lists %d runs cut short, the report %d", counts[CutShortOutcome], rep.CutShort)
	}
	ok := rep.Runs - rep.Own - rep.Inherent - rep.Untold - rep.Unknown - rep.Flaky
	if counts["ok"] != ok {
		t.Errorf("runs file lists %d ok runs, the report %d", counts["ok"], ok)
	}
}

// TestProgramEndsOnTime is TestRealEndsOnTime with a lock program: its
// processes, kept warm between runs on each deployment, are ended with
// the deployments when the time runs out, all at once, and with nothing
// left behind.
func TestProgramEndsOnTime(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and python")
	}
	if exec.Command("/usr/bin/python3", "-c", "import redis").Run() != nil {
		t.Skip("python3-redis is not installed for /usr/bin/python3 (make deps)")
	}
	path, err := filepath.Abs("../programs/redispy.py")
	if err != nil {
		t.Fatal(err)
	}
	// A tag of this test's own in the command line, for pgrep.
	tag := fmt.Sprintf("--tag=ontime-test-%d", os.Getpid())
	const budget = 4 * time.Second
	start := time.Now()
	rep, err := Run(context.Background(), Config{Lock: "redis-py", New: program.New("/usr/bin/python3 " + path + " " + tag),
		ReferenceOf: locks.ReferenceOfKind(cluster.Single, false), Time: budget, Seed: 1, Parallel: 2, Dir: t.TempDir()})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took > budget+endGrace {
		t.Errorf("a %s exploration took %s: %d runs, %d cut short", budget, took.Round(time.Millisecond), rep.Runs, rep.CutShort)
	}
	if out, err := exec.Command("pgrep", "-af", tag).Output(); err == nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("processes left after the exploration:\n%s", out)
	}
}
