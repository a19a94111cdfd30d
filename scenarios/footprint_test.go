package scenarios_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/program"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// TestProgramFootprint: a program's own requests show its lock, through
// its service's relay, and the run learns it: the end names the key, the
// lease and the kind of the hold, and the requests they came from. On
// Redis, a program that prefixes its key and holds a whole-second lease
// of its own shows both in its SET; on etcd the lease comes from the
// grant's reply and the key from the Txn's put (gRPC); on ZooKeeper from
// the session's connect reply and the ephemeral node's create.
func TestProgramFootprint(t *testing.T) {
	for _, tt := range []struct {
		scenario, command string
		need              func(testing.TB)
		want              footprint.Footprint // From fields: only that they are set
	}{
		{"crash-holder", redisPy + " --prefix=app:orders: --lease-ms=1000", needRedisPy,
			footprint.Footprint{Key: "app:orders:lock", Lease: time.Second, Kind: footprint.Data}},
		{"contention-etcd", etcdPy, func(t testing.TB) { needPython(t, "etcd3", "python3-etcd3") },
			footprint.Footprint{Key: "/locklab/lock", Lease: time.Second, Kind: footprint.Session}},
		{"contention-zk", zkPy, func(t testing.TB) { needPython(t, "kazoo", "python3-kazoo") },
			footprint.Footprint{Key: "/locklab/lock", Lease: time.Second, Kind: footprint.Session}},
		{"contention-postgres", pgAdvisoryPy, func(t testing.TB) { needPython(t, "psycopg2", "python3-psycopg2") },
			footprint.Footprint{Key: "hashtext('lock')", Kind: footprint.Session}},
		{"contention-sql", getLockPHP, func(t testing.TB) { needPHP(t); needPDOMySQL(t) },
			footprint.Footprint{Key: "lock", Kind: footprint.Session}},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			tt.need(t)
			t.Parallel()
			dir := t.TempDir()
			res, err := scenarios.Run(context.Background(), tt.scenario, program.New(tt.command), runner.Options{Dir: dir, ReferenceRuns: -1})
			if err != nil {
				t.Fatal(err)
			}
			ops, err := history.ReadFile(filepath.Join(dir, runner.HistoryFile))
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(ops, func(op history.Op) bool { return op.Kind == history.KindEnd })
			if i < 0 || ops[i].End.Footprint == nil {
				t.Fatalf("no footprint at the end (%s)", checksOf(res))
			}
			end := ops[i].End
			fp := *end.Footprint
			got := footprint.Footprint{Key: fp.Key, Lease: fp.Lease, Kind: fp.Kind}
			if got != tt.want || fp.From == "" || fp.KindFrom == "" || (fp.Lease > 0) != (fp.LeaseFrom != "") || len(end.Ambiguous) > 0 {
				t.Errorf("footprint %+v (ambiguous %q); want %+v, each from a request", fp, end.Ambiguous, tt.want)
			}
			t.Logf("learned: %s", fp)
		})
	}
}

// TestLeaseTimedLikeItsTwin: a program that prefixes its key and holds a
// whole-second lease of its own (redis-py, --prefix=app: --lease-ms=1000,
// no renewal) is timed against that lease, learned from its first run's
// SET, and gets the verdicts of its Go twin, the token lock with the same
// key and lease, learned the same way: own under slow work past the
// lease (the renewing reference stays ok), inherent under a pause past it,
// ok after a crash right after its SET (the key expires). Timed against
// the scenario's 200 ms, none of these faults would outlast the lease.
func TestLeaseTimedLikeItsTwin(t *testing.T) {
	needRedisPy(t)
	t.Parallel()
	locks := []struct {
		name string
		new  harness.NewLocker
	}{
		{"redis-py", program.New(redisPy + " --prefix=app: --lease-ms=1000")},
		{"Go twin", reference.NewTokenLockAs("app:", time.Second)},
	}
	for _, tc := range []struct {
		scenario string
		lock     checker.Verdict
		kind     checker.Kind
	}{
		{"slow-work", checker.Illegal, checker.Own},
		{"pause-holder", checker.Illegal, checker.Inherent},
		{"crash-after-setnx", checker.OK, ""},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			results := make([]*runner.Result, len(locks))
			dirs := []string{t.TempDir(), t.TempDir()} // read after the runs
			t.Run("runs", func(t *testing.T) {
				for i, l := range locks {
					dir := dirs[i]
					t.Run(l.name, func(t *testing.T) {
						t.Parallel()
						results[i] = timedLikeItsTwin(t, dir, l.name, l.new, tc.scenario, tc.lock, tc.kind)
					})
				}
			})
			if t.Failed() {
				return
			}
			got, want := results[0], results[1]
			for _, c := range []string{checker.CheckLock, checker.CheckResource, checker.CheckLiveness} {
				if got.Verdicts[c] != want.Verdicts[c] || verdictOf(got, c).Kind != verdictOf(want, c).Kind {
					t.Errorf("%s: redis-py %s %q (%s), its twin %s %q (%s)", c, got.Verdicts[c], verdictOf(got, c).Kind, detail(got, c),
						want.Verdicts[c], verdictOf(want, c).Kind, detail(want, c))
				}
			}
			if tc.scenario == "crash-after-setnx" {
				if g, w := struck(t, got.Dir), struck(t, want.Dir); len(g) == 0 || !slices.Equal(g, w) {
					t.Errorf("struck: redis-py %q, its twin %q; want the same crash at its SET", g, w)
				}
			}
		})
	}
}

// timedLikeItsTwin runs lock in scenario into dir, and wants it timed against the
// 1 s lease its first run learned, with verdict and kind of lock checker;
// where the faults need the lease outlasted, the first run, timed against
// the scenario's 200 ms, must have been ok: the run made again is what
// judged the lock.
func timedLikeItsTwin(t *testing.T, dir, name string, lock harness.NewLocker, scenario string, verdict checker.Verdict, kind checker.Kind) *runner.Result {
	res := settled(t, func() (*runner.Result, error) {
		return scenarios.Run(context.Background(), scenario, lock, runner.Options{Seed: 1, Dir: dir, Lock: name})
	})
	if tm := res.Timing; tm == nil || tm.Source != runner.TimedLearned || tm.Lease != time.Second || tm.Stretch != 5 {
		t.Fatalf("timing %+v; want the learned lease of 1 s, 5× the scenario's", tm)
	}
	b, err := os.ReadFile(filepath.Join(dir, runner.LearnDir, runner.ResultFile))
	if err != nil {
		t.Fatalf("the run that learned the lease was not kept: %v", err)
	}
	var first runner.Result
	if err := json.Unmarshal(b, &first); err != nil {
		t.Fatal(err)
	}
	if verdict != checker.OK && first.Verdicts[checker.CheckLock] != checker.OK {
		t.Errorf("timed against the scenario's 200 ms, lock %s; want ok, the fault short of the lease", first.Verdicts[checker.CheckLock])
	}
	c := verdictOf(res, checker.CheckLock)
	if c.Verdict != verdict || c.Kind != kind || len(res.Spoiled) > 0 {
		t.Errorf("lock %s, kind %q (%s; %s; spoiled %q); want %s, %q", c.Verdict, c.Kind, c.Detail, c.KindWhy, res.Spoiled, verdict, kind)
	}
	t.Logf("%s; %v", res.Timing.Text, res.Verdicts)
	return res
}
