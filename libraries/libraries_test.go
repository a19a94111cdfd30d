package libraries_test

import (
	"context"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/libraries"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// every is the verdict map of a lock that passes every checker.
var every = map[string]checker.Verdict{
	checker.CheckLock: checker.OK, checker.CheckResource: checker.OK,
	checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK,
}

// run puts a lock through a scenario. A run the machine stalled past a TTL
// is unknown rather than a verdict on the lock, so it is tried again, at
// most twice, as the pitfalls tests do.
func run(t *testing.T, scenario string, l libraries.Lock) *runner.Result {
	t.Helper()
	var res *runner.Result
	for try := 1; ; try++ {
		var err error
		res, err = scenarios.Run(context.Background(), scenario, l.New,
			runner.Options{Dir: t.TempDir(), Lock: "libraries/" + l.Name})
		if err != nil {
			t.Fatal(err)
		}
		late := res.Late()
		if late == nil || try == 3 {
			return res
		}
		t.Logf("try %d: %s: %s", try, late.Checker, late.Detail)
	}
}

// expect checks the named verdicts of a result and logs every check on failure.
func expect(t *testing.T, res *runner.Result, want map[string]checker.Verdict) {
	t.Helper()
	t.Logf("verdicts: %v", res.Verdicts)
	for checkerName, v := range want {
		if got := res.Verdicts[checkerName]; got != v {
			t.Errorf("%s: got %s, want %s", checkerName, got, v)
		}
	}
	if t.Failed() {
		for _, c := range res.Checks {
			t.Logf("%s: %s: %s", c.Checker, c.Verdict, c.Detail)
		}
	}
}

func TestLibraries(t *testing.T) {
	slowWork := map[string]map[string]checker.Verdict{
		// Neither library renews a lease by itself: the slow section
		// outlives it and a second client walks in.
		"redsync":   {checker.CheckLock: checker.Illegal},
		"redislock": {checker.CheckLock: checker.Illegal},
		// The refresh loop keeps the lease alive through 2.5 TTLs of work.
		"redsync-refresh":   {checker.CheckLock: checker.OK},
		"redislock-refresh": {checker.CheckLock: checker.OK},
	}
	cases := []struct {
		scenario string
		want     func(name string) map[string]checker.Verdict
	}{
		{"contention", func(string) map[string]checker.Verdict { return every }},
		{"slow-work", func(name string) map[string]checker.Verdict { return slowWork[name] }},
	}
	for _, l := range libraries.All() {
		for _, c := range cases {
			t.Run(l.Name+"/"+c.scenario, func(t *testing.T) {
				t.Parallel()
				expect(t, run(t, c.scenario, l), c.want(l.Name))
			})
		}
	}
}

// TestRedsyncRedlock runs redsync on five masters in the Redlock scenario
// that a correct Redlock passes: node 2 restarts empty only after a TTL.
func TestRedsyncRedlock(t *testing.T) {
	t.Parallel()
	for _, l := range libraries.All() {
		if !strings.HasPrefix(l.Name, "redsync") {
			continue
		}
		t.Run(l.Name, func(t *testing.T) {
			t.Parallel()
			expect(t, run(t, "redlock-restart-delayed", l), every)
		})
	}
}

// TestHooklessExercised: the faults of crash-after-setnx strike the
// library's own commands, though it carries no hook: the run happens as
// written, and redislock's single SET NX PX survives it.
func TestHooklessExercised(t *testing.T) {
	res, err := scenarios.Run(context.Background(), "crash-after-setnx", libraries.NewRedislock,
		runner.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Spoiled) > 0 {
		t.Fatalf("spoiled: %v", res.Spoiled)
	}
	if res.Late() != nil {
		t.Skip("the machine stalled the run")
	}
	for checkerName, v := range res.Verdicts {
		if v != checker.OK {
			t.Errorf("%s: %s, want ok", checkerName, v)
		}
	}
}
