package explore

import (
	"context"
	"os"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
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
	c := checker.Check{Checker: checker.CheckLock, Verdict: checker.OK}
	if armed(s, failpoint.CriticalSection, failpoint.ActionSleep) {
		c = checker.Check{Checker: checker.CheckLock, Verdict: checker.Illegal, Kind: checker.Own}
	}
	res.Checks = []checker.Check{c, {Checker: checker.CheckLiveness, Verdict: checker.OK}}
	return res, os.MkdirAll(opts.Dir, 0o755)
}
