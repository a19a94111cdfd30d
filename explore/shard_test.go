package explore

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/runner"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		bad  bool
	}{
		{in: "0/4", want: Shard{0, 4}},
		{in: "3/4", want: Shard{3, 4}},
		{in: "0/1", want: Shard{0, 1}},
		{in: "4/4", bad: true},
		{in: "-1/4", bad: true},
		{in: "0/0", bad: true},
		{in: "1", bad: true},
		{in: "a/b", bad: true},
	} {
		got, err := ParseShard(tc.in)
		if (err != nil) != tc.bad || !tc.bad && got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// TestShare: the shares of a campaign add up to it, whatever its size.
func TestShare(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		for runs := range 20 {
			sum := 0
			for i := range n {
				sum += Shard{i, n}.share(runs)
			}
			if sum != runs {
				t.Errorf("%d shards of %d runs share %d", n, runs, sum)
			}
		}
	}
}

// slowSectionIsOwn is a runner.Run that fails the lock checker as the
// lock's own exactly when a critical section is made slow: its verdicts
// depend on the plan alone, as a sharded campaign's test needs.
func slowSectionIsOwn(_ context.Context, s runner.Scenario, _ harness.NewLocker, opts runner.Options) (*runner.Result, error) {
	res := &runner.Result{Scenario: s.Name, Seed: opts.Seed}
	c := check.Check{Checker: check.CheckLock, Verdict: check.OK}
	if armed(s, harness.FailpointCriticalSection, harness.ActionSleep) {
		c = check.Check{Checker: check.CheckLock, Verdict: check.Illegal, Kind: check.Own}
	}
	res.Checks = []check.Check{c, {Checker: check.CheckLiveness, Verdict: check.OK}}
	return res, os.MkdirAll(opts.Dir, 0o755)
}

// TestShardsMakeTheRunsOfOne: three shards with the same seed make exactly
// the runs one process makes, each with the same seed and outcome, and
// their merged report counts and names the same bugs.
func TestShardsMakeTheRunsOfOne(t *testing.T) {
	explore := func(sh Shard, parallel int) (*Report, []RunRecord) {
		dir := t.TempDir()
		rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
			Runs: 40, Seed: 5, Shard: sh, Parallel: parallel, Dir: dir, run: slowSectionIsOwn})
		if err != nil {
			t.Fatal(err)
		}
		runs, err := ReadRuns(filepath.Join(dir, RunsFileName("fake", cluster.Single)))
		if err != nil {
			t.Fatal(err)
		}
		return rep, runs
	}
	whole, wholeRuns := explore(Shard{}, 1)
	if len(whole.Bugs) == 0 || whole.Runs != 40 {
		t.Fatalf("the whole exploration made %d runs and found %d bugs; want 40 and some", whole.Runs, len(whole.Bugs))
	}
	var shards []*Report
	var runs []RunRecord
	for i := range 3 {
		rep, rs := explore(Shard{i, 3}, 1+i) // parallelism must not matter
		if rep.Shard != (Shard{i, 3}).String() {
			t.Errorf("shard %d's report says shard %q", i, rep.Shard)
		}
		for _, r := range rs {
			if r.Run%3 != i {
				t.Errorf("shard %d made run %d", i, r.Run)
			}
		}
		shards, runs = append(shards, rep), append(runs, rs...)
	}
	merged, mergedRuns, missing, err := Merge(shards, runs)
	if err != nil || len(missing) > 0 {
		t.Fatalf("merge: %v, missing %v", err, missing)
	}
	same := func(a, b RunRecord) bool {
		return a.Run == b.Run && a.Seed == b.Seed && a.Outcome == b.Outcome && slices.Equal(a.Failing, b.Failing)
	}
	if !slices.EqualFunc(mergedRuns, wholeRuns, same) {
		t.Errorf("the shards' runs differ from the whole's:\n%v\n%v", mergedRuns, wholeRuns)
	}
	if merged.Runs != whole.Runs || merged.Own != whole.Own || merged.Quiet != whole.Quiet {
		t.Errorf("merged %d runs, %d own, %d quiet; whole %d, %d, %d", merged.Runs, merged.Own, merged.Quiet, whole.Runs, whole.Own, whole.Quiet)
	}
	signatures := func(bugs []Bug) []string {
		var s []string
		for _, b := range bugs {
			s = append(s, b.Signature)
		}
		return s
	}
	if got, want := signatures(merged.Bugs), signatures(whole.Bugs); !slices.Equal(got, want) {
		t.Errorf("merged bugs %q, whole %q", got, want)
	}
	if merged.Bugs[0].FirstRun != whole.Bugs[0].FirstRun {
		t.Errorf("merged first bug at run %d, whole at %d", merged.Bugs[0].FirstRun, whole.Bugs[0].FirstRun)
	}
}

// TestMergeFolds: bugs of one signature are one; a bug named with faults
// another shard showed it does not need folds into that one, and so do the
// runs counted to it; the campaign's shards must agree and not repeat.
func TestMergeFolds(t *testing.T) {
	shard := func(sh string, bugs ...Bug) *Report {
		return &Report{Lock: "l", Topology: cluster.Single, Seed: 3, Faults: "every kind", Shard: sh, Runs: 10, Own: len(bugs), WallS: 60, Bugs: bugs}
	}
	bug := func(sig string, firstRun int) Bug {
		return Bug{Signature: sig, FirstRun: firstRun, Runs: 1, Replay: sig, Found: Found{Run: firstRun}}
	}
	a := shard("0/3", bug("lock illegal · slow work + pause holder", 0), bug("liveness stuck · crash", 6))
	b := shard("1/3", bug("lock illegal · slow work", 4), bug("liveness stuck · crash", 1))
	runs := []RunRecord{{Run: 0, Bug: "lock illegal · slow work + pause holder"}, {Run: 1, Bug: "liveness stuck · crash"}}
	rep, merged, missing, err := Merge([]*Report{a, b}, runs)
	if err != nil {
		t.Fatal(err)
	}
	want := []Bug{{Signature: "lock illegal · slow work", FirstRun: 0, Runs: 2}, {Signature: "liveness stuck · crash", FirstRun: 1, Runs: 2}}
	if len(rep.Bugs) != len(want) {
		t.Fatalf("bugs %+v, want %+v", rep.Bugs, want)
	}
	for i, w := range want {
		if g := rep.Bugs[i]; g.Signature != w.Signature || g.FirstRun != w.FirstRun || g.Runs != w.Runs {
			t.Errorf("bug %d: %s first at %d, %d runs; want %s at %d, %d", i+1, g.Signature, g.FirstRun, g.Runs, w.Signature, w.FirstRun, w.Runs)
		}
	}
	if merged[0].Bug != "lock illegal · slow work" {
		t.Errorf("run 0 counted to %q, want the folded bug", merged[0].Bug)
	}
	if !slices.Equal(missing, []int{2}) {
		t.Errorf("missing %v, want [2]", missing)
	}
	if rep.Runs != 20 || rep.WallS != 60 || rep.RunsPerMin != 20 {
		t.Errorf("%d runs in %.0f s, %.0f a minute; want 20 in 60 s, 20", rep.Runs, rep.WallS, rep.RunsPerMin)
	}
	for name, shards := range map[string][]*Report{
		"twice":       {a, shard("0/3")},
		"other seed":  {a, {Lock: "l", Topology: cluster.Single, Seed: 4, Faults: "every kind", Shard: "1/3"}},
		"other split": {a, shard("1/2")},
		"whole":       {a, shard("")},
	} {
		if _, _, _, err := Merge(shards, nil); err == nil {
			t.Errorf("%s: merged", name)
		}
	}
	if _, _, _, err := Merge([]*Report{a, b}, []RunRecord{{Run: 3}, {Run: 3}}); err == nil {
		t.Error("a run listed twice merged")
	}
}
