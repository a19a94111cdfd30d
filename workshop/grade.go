package workshop

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/suite"
)

// GradeOptions say where a grade's runs go and how long it explores.
type GradeOptions struct {
	Out      string    // one folder per run, each with its run.html; made when missing
	Seed     int64     // 0 means 1
	Progress io.Writer // one line per run; nil for none
	// Explore, when above 0, explores the lock with random fault schedules
	// for that long once every scenario passes, as a second opinion.
	Explore time.Duration
}

// Grade is how a lock did in one scenario of the pitfall it was graded
// against.
type Grade struct {
	Scenario string
	// Mismatches says, one line per checker, how its verdict differs
	// from the catalogue's fix; empty when the lock passed.
	Mismatches []string
	Page       string // the run's page
}

// Pass reports whether the lock did what the pitfall's fix does.
func (g Grade) Pass() bool { return len(g.Mismatches) == 0 }

// String is the grade in one line, with the page to open.
func (g Grade) String() string {
	if g.Pass() {
		return fmt.Sprintf("PASS %s (%s)", g.Scenario, g.Page)
	}
	return fmt.Sprintf("FAIL %s: %s; see %s", g.Scenario, strings.Join(g.Mismatches, "; "), g.Page)
}

// GradeLock puts the lock newLocker builds, called name, through every
// scenario in which the catalogue shows the fix of the pitfall called
// pitfall, and grades each run against what the fix gets there. A run
// the machine may have unsettled (an unknown verdict) is made once more.
func GradeLock(ctx context.Context, pitfall, name string, newLocker harness.NewLocker, opts GradeOptions) ([]Grade, error) {
	ps, err := pitfalls.Lookup(pitfall)
	if err != nil {
		return nil, err
	}
	if len(ps) != 1 {
		return nil, fmt.Errorf("grade: %q names %d pitfalls; name one", pitfall, len(ps))
	}
	p := ps[0]
	var grades []Grade
	for _, c := range p.Cases() {
		if c.Variant != pitfalls.Fixed {
			continue
		}
		g, err := gradeRun(ctx, p, c, name, newLocker, opts)
		if err != nil {
			return grades, err
		}
		grades = append(grades, g)
	}
	if len(grades) == 0 {
		return nil, fmt.Errorf("grade: pitfall %s has no fix to grade against", p.Name)
	}
	return grades, nil
}

// gradeRun makes the run of one fix case and grades it.
func gradeRun(ctx context.Context, p pitfalls.Pitfall, c pitfalls.Case, name string, newLocker harness.NewLocker, opts GradeOptions) (Grade, error) {
	dir := filepath.Join(opts.Out, fmt.Sprintf("%s-%s", p.Name, c.Scenario))
	var res *runner.Result
	for try := 1; try <= 2; try++ {
		var err error
		// No reference runs: a grade compares verdicts with the fix's,
		// it does not need their kind.
		res, err = scenarios.Run(ctx, c.Scenario, newLocker, runner.Options{Seed: opts.Seed, Dir: dir, Lock: name, ReferenceRuns: -1})
		if err != nil {
			return Grade{}, fmt.Errorf("grade %s in %s: %w", name, c.Scenario, err)
		}
		if !unknown(res.Verdicts) {
			break
		}
	}
	if err := suite.Keep(dir, name); err != nil {
		return Grade{}, err
	}
	g := Grade{Scenario: c.Scenario, Page: filepath.Join(dir, reports.RunPageFile),
		Mismatches: checker.Mismatches(c.Expected, res.Verdicts)}
	for _, why := range res.Spoiled {
		g.Mismatches = append(g.Mismatches, "spoiled: "+why)
	}
	if opts.Progress != nil {
		fmt.Fprintln(opts.Progress, g)
	}
	return g, nil
}

func unknown(v map[string]checker.Verdict) bool {
	for _, got := range v {
		if got == checker.Unknown {
			return true
		}
	}
	return false
}

// GradeTest is the whole of an exercise's go test: it grades the lock
// newLocker builds against the pitfall called pitfall, its runs in
// folder runs/, and fails naming each scenario the lock still fails and
// the page of its run. With explore above 0 it then explores the lock
// for that long and fails on a bug of its own.
func GradeTest(t testing.TB, pitfall string, newLocker harness.NewLocker, explore time.Duration) {
	t.Helper()
	ctx := context.Background()
	grades, err := GradeLock(ctx, pitfall, "my-lock", newLocker, GradeOptions{Out: "runs", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range grades {
		if !g.Pass() {
			t.Error(g)
		} else {
			t.Log(g)
		}
	}
	if explore <= 0 || t.Failed() {
		return
	}
	if why, err := exploreLock(ctx, pitfall, newLocker, explore); err != nil {
		t.Fatal(err)
	} else if why != "" {
		t.Error(why)
	}
}

// exploreLock explores the lock on the topology of the pitfall's scenario
// and says what bug of its own it found first, if any.
func exploreLock(ctx context.Context, pitfall string, newLocker harness.NewLocker, d time.Duration) (string, error) {
	ps, err := pitfalls.Lookup(pitfall)
	if err != nil {
		return "", err
	}
	s, err := scenarios.Lookup(ps[0].Scenario)
	if err != nil {
		return "", err
	}
	if s.Topology == cluster.Single || s.Topology == cluster.Replicated {
		rep, err := explore.Run(ctx, explore.Config{Lock: "my-lock", New: newLocker, Topology: s.Topology,
			Nested: s.Workload.Nested, Time: d, Seed: 1, StopAtFirst: true, Dir: "runs/explore"})
		if err != nil {
			return "", err
		}
		if rep.Own > 0 && rep.First != nil {
			return fmt.Sprintf("explore found a bug of the lock's own after %d runs: %s; replay with %s", rep.Runs, rep.First.Plan, rep.Replay), nil
		}
	}
	return "", nil
}
