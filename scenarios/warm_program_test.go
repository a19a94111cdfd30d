package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/program"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// TestWarmProgramSameVerdicts: a lock program kept warm between the runs
// of one warm deployment (asked reset, its relay attached to each run's
// links) gives the verdicts and kinds a fresh one gives, in scenarios
// that keep it (slow-work), pause it (pause-holder: SIGSTOP, then a
// restart) and crash it (crash-after-setnx: SIGKILL, then a restart); and
// once the pool closes, no process of it is left.
func TestWarmProgramSameVerdicts(t *testing.T) {
	needRedisPy(t)
	// A tag of this test's own in the command line, for pgrep: other
	// tests may run redispy.py meanwhile.
	tag := fmt.Sprintf("--tag=warm-test-%d", os.Getpid())
	lock := program.New(redisPy + " --renew " + tag)
	names := []string{"slow-work", "pause-holder", "crash-after-setnx", "slow-work"}
	run := func(name string, pool *runner.Options) *runner.Result {
		opts := runner.Options{Seed: 1, Dir: t.TempDir(), Lock: "redis-py"}
		if pool != nil {
			opts.Pool = pool.Pool
		}
		return settled(t, func() (*runner.Result, error) { return scenarios.Run(context.Background(), name, lock, opts) })
	}
	fresh := map[string]*runner.Result{}
	for _, name := range names {
		if fresh[name] == nil {
			fresh[name] = run(name, nil)
		}
	}
	pool := runner.NewPool()
	defer pool.Close()
	_, reusedBefore := program.Starts()
	for pass := range 2 {
		for _, name := range names {
			warm := run(name, &runner.Options{Pool: pool})
			for _, c := range []string{checker.CheckLock, checker.CheckResource, checker.CheckLiveness} {
				f := fresh[name]
				if warm.Verdicts[c] != f.Verdicts[c] || verdictOf(warm, c).Kind != verdictOf(f, c).Kind {
					t.Errorf("pass %d, %s, %s: warm %s %q (%s), fresh %s %q (%s)", pass, name, c,
						warm.Verdicts[c], verdictOf(warm, c).Kind, detail(warm, c), f.Verdicts[c], verdictOf(f, c).Kind, detail(f, c))
				}
			}
		}
	}
	started, reused := program.Starts()
	t.Logf("programs started %d, kept warm for another run %d", started, reused-reusedBefore)
	if reused == reusedBefore {
		t.Errorf("no program was kept warm between runs")
	}
	if err := pool.Close(); err != nil {
		t.Errorf("close the pool: %v", err)
	}
	if out, err := exec.Command("pgrep", "-af", tag).Output(); err == nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("processes left after the pool closed:\n%s", out)
	}
}

// TestWarmKazooAfterPause: programs/zk-lock.py kept warm between runs of
// pause-holder-zk, whose holder's session expires while it is stopped,
// serves every next run as a fresh process does. Its kazoo client, stopped
// at the reset and started again at the next request, once sent a close
// request first on its new session, closing it: the holder never got the
// lock, and the run was spoiled (its failpoint never fired).
func TestWarmKazooAfterPause(t *testing.T) {
	needPython(t, "kazoo", "python3-kazoo")
	lock := program.New(zkPy)
	pool := runner.NewPool()
	defer pool.Close()
	_, reusedBefore := program.Starts()
	for i := range 4 {
		opts := runner.Options{Seed: 1, Dir: t.TempDir(), Lock: "kazoo", Pool: pool}
		res := settled(t, func() (*runner.Result, error) {
			return scenarios.Run(context.Background(), "pause-holder-zk", lock, opts)
		})
		if res.Verdicts[checker.CheckLock] != checker.Illegal {
			t.Errorf("run %d: lock %s (%s), want illegal: the paused holder loses its session", i+1, res.Verdicts[checker.CheckLock], detail(res, checker.CheckLock))
		}
	}
	if _, reused := program.Starts(); reused == reusedBefore {
		t.Errorf("no program was kept warm between runs")
	}
}
