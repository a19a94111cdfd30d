package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/runner"
)

func TestRunUnderNetworkAndNodeFaults(t *testing.T) {
	s := runner.Scenario{
		Name:     "faults",
		Topology: cluster.Single,
		Workload: runner.Workload{TTL: 200 * time.Millisecond, Work: 5 * time.Millisecond, Duration: 1500 * time.Millisecond, Timeout: 300 * time.Millisecond},
		Faults: []runner.ScheduledFault{
			{At: 200 * time.Millisecond, For: 300 * time.Millisecond, Fault: fault.Partition{Client: 0}},
			{At: 200 * time.Millisecond, For: 300 * time.Millisecond, Fault: fault.BlackHole{Client: 1, Direction: network.Downstream}},
			{At: 600 * time.Millisecond, For: 200 * time.Millisecond, Fault: fault.Latency{Client: 2, Delay: 20 * time.Millisecond}},
			{At: 900 * time.Millisecond, For: 200 * time.Millisecond, Fault: fault.PauseNode{Node: 0}},
		},
	}
	dir := t.TempDir()
	res, err := runner.Run(context.Background(), s, reference.NewTokenLock, runner.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{checker.CheckLock, checker.CheckResource, checker.CheckLiveness} {
		if res.Verdicts[c] != checker.OK {
			t.Errorf("%s: %s with a correct lock", c, res.Verdicts[c])
		}
	}
	ops := readHistory(t, dir)
	faults, unknown := 0, 0
	for _, op := range ops {
		if op.Kind == history.KindFault {
			faults++
			if op.Return-op.Call < 150*time.Millisecond {
				t.Errorf("fault %q lasted %s", op.Fault, op.Return-op.Call)
			}
		}
		if op.Client == 1 && op.Outcome == models.Unknown {
			unknown++
		}
	}
	if faults != len(s.Faults) {
		t.Errorf("history holds %d faults, want %d", faults, len(s.Faults))
	}
	if unknown == 0 {
		t.Error("black-holed replies gave client 1 no unknown outcome")
	}
	for _, file := range []string{runner.ResultFile, runner.LockFile, runner.ResourceFile} {
		if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
			t.Error(err)
		}
	}
	if res.Stats.During.Sections == 0 || res.Stats.Before.Sections == 0 {
		t.Errorf("stats: %+v", res.Stats)
	}
}

func TestRunCancelledLeavesNothing(t *testing.T) {
	// A private TMPDIR: other packages' tests make run directories too.
	t.Setenv("TMPDIR", t.TempDir())
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	s := runner.Scenario{Name: "cancelled", Workload: runner.Workload{Duration: time.Minute}}
	time.AfterFunc(500*time.Millisecond, cancel)
	if _, err := runner.Run(ctx, s, reference.NewWatchdogLock, runner.Options{}); err == nil {
		t.Fatal("a cancelled run returned no error")
	}
	if n := redisChildren(t); n != 0 {
		t.Errorf("%d redis-server processes survived the run", n)
	}
	if left := locklabDirs(t); left != 0 {
		t.Errorf("%d run directories left in TMPDIR", left)
	}
	// Goroutines of closed connections end shortly after; wait for them.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before+2 {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		s    runner.Scenario
		opts runner.Options
		want string
	}{
		{"no name", runner.Scenario{}, runner.Options{}, "no name"},
		{"negative duration", runner.Scenario{Name: "x", Workload: runner.Workload{Work: -1}}, runner.Options{}, "negative"},
		{"unknown topology", runner.Scenario{Name: "x", Topology: "ring"}, runner.Options{}, "unknown topology"},
		{"negative clients", runner.Scenario{Name: "x"}, runner.Options{Clients: -1}, "negative"},
		{"too short for the story", runner.Scenario{Name: "x", MinDuration: 3 * time.Second}, runner.Options{Duration: time.Second},
			"too short for this scenario's story; it needs at least 3s"},
		{"postgres stock off postgres", runner.Scenario{Name: "x", Topology: cluster.MariaDBTopology, Workload: runner.Workload{Resource: runner.PostgresResource}},
			runner.Options{}, "resource postgres lives in the server of topology postgres, not mariadb"},
		{"shared pool on etcd", runner.Scenario{Name: "x", Topology: cluster.EtcdTopology, Workload: runner.Workload{Pool: 3}}, runner.Options{},
			"topology \"etcd\"'s clients have no pool to share"},
		{"shared pool with a fault", runner.Scenario{Name: "x", Topology: cluster.MariaDBTopology, Workload: runner.Workload{Pool: 3},
			Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Action: failpoint.Crash()}}}, runner.Options{},
			"a shared pool takes no faults yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runner.Run(context.Background(), tt.s, reference.NewTokenLock, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// redisChildren counts redis-server processes whose parent is this test.
func redisChildren(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	n := 0
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …
		s := string(stat)
		i := strings.LastIndex(s, ")")
		if i < 0 || !strings.Contains(s[:i], "(redis-server") {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			n++
		}
	}
	return n
}

func locklabDirs(t *testing.T) int {
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "locklab-*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// TestRunWaitsForItsFailpoints: a run goes on past its Duration until the
// failpoint it arms has fired, so an unlucky client cannot skip the story.
func TestRunWaitsForItsFailpoints(t *testing.T) {
	s := runner.Scenario{
		Name:       "late",
		Workload:   runner.Workload{TTL: 200 * time.Millisecond, Work: 5 * time.Millisecond, Duration: 50 * time.Millisecond},
		Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Client: 0, Skip: 15, Action: failpoint.Sleep(time.Millisecond)}},
	}
	res, err := runner.Run(context.Background(), s, reference.NewTokenLock, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Spoiled) != 0 {
		t.Errorf("spoiled: %v", res.Spoiled)
	}
	if res.Stats.Sections < 16 {
		t.Errorf("%d sections: the run stopped before client 0's 16th", res.Stats.Sections)
	}
}

// TestRunSpoiled: a failpoint the lock never reaches, and a fault due
// after the run ended, make every verdict unknown and the result say why;
// the run ran, so Run returns no error.
func TestRunSpoiled(t *testing.T) {
	work := runner.Workload{TTL: 200 * time.Millisecond, Work: 5 * time.Millisecond, Duration: 100 * time.Millisecond}
	tests := []struct {
		name string
		s    runner.Scenario
		want string
	}{
		{"hook the lock lacks", runner.Scenario{Name: "no-hook", Workload: work,
			Failpoints: []failpoint.Point{{Name: "no-such-hook", Client: 0, Action: failpoint.Crash()}}},
			`failpoint no-such-hook never fired`},
		{"fault after the end", runner.Scenario{Name: "late-fault", Workload: work,
			Faults: []runner.ScheduledFault{{At: time.Minute, For: time.Second, Fault: fault.ClockSkew{Client: 0, By: time.Second}}}},
			"was never injected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // the run waits 15 s for the failpoint before it gives up
			res, err := runner.Run(context.Background(), tt.s, reference.NewTokenLock, runner.Options{})
			if err != nil {
				t.Fatalf("error %v: a run that ran returns its result and no error", err)
			}
			if len(res.Spoiled) != 1 || !strings.Contains(res.Spoiled[0], tt.want) {
				t.Errorf("spoiled: %q, want one line naming %q", res.Spoiled, tt.want)
			}
			for _, c := range res.Checks {
				if c.Verdict != checker.Unknown || !strings.Contains(c.Detail, tt.want) {
					t.Errorf("%s: %s: %s", c.Checker, c.Verdict, c.Detail)
				}
			}
		})
	}
}

// TestRunFinishesTheStory: a failpoint still acting when the workload's
// time is up (here: slow work that lasts until another client reaches its
// critical section) ends while the other clients still cycle, instead of
// waiting out its cap after they stopped.
func TestRunFinishesTheStory(t *testing.T) {
	s := runner.Scenario{
		Name:     "story",
		Workload: runner.Workload{TTL: 200 * time.Millisecond, Work: 5 * time.Millisecond, Duration: 100 * time.Millisecond},
		Failpoints: []failpoint.Point{
			{Name: failpoint.BeforeAcquire, Client: 0, Skip: 1, Action: failpoint.Sleep(300 * time.Millisecond)},
			{Name: failpoint.BeforeAcquire, Client: 0, Skip: 1, Action: failpoint.SleepUntil(failpoint.CriticalSection, 5*time.Second)},
		},
	}
	res, err := runner.Run(context.Background(), s, reference.NewTokenLock, runner.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ops := readHistory(t, res.Dir)
	var until []time.Duration
	for _, op := range ops {
		if op.Kind == history.KindFault && strings.Contains(op.Detail, "until another client") {
			until = append(until, op.Return-op.Call)
		}
	}
	if len(until) != 1 || until[0] > 2*time.Second {
		t.Errorf("slow work until another client's section lasted %v; the others stopped cycling before it ended", until)
	}
}

// readHistory reads the history a run wrote into dir.
func readHistory(t *testing.T, dir string) []history.Op {
	t.Helper()
	ops, err := history.ReadFile(filepath.Join(dir, runner.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// watcher keeps what a run tells it, in order.
type watcher struct {
	mu   sync.Mutex
	told []told
}

type told struct {
	op    history.Op
	began bool
}

func (w *watcher) Began(op history.Op) {
	w.mu.Lock()
	w.told = append(w.told, told{op, true})
	w.mu.Unlock()
}
func (w *watcher) Recorded(op history.Op) {
	w.mu.Lock()
	w.told = append(w.told, told{op, false})
	w.mu.Unlock()
}

// TestRunWatched: a run tells its watcher every operation it records, in
// the history's order, and before that each release when it is called and
// each fault when it is injected, so that a live view can draw them as the
// checkers will judge them.
func TestRunWatched(t *testing.T) {
	s := runner.Scenario{
		Name:     "watched",
		Topology: cluster.Single,
		Workload: runner.Workload{TTL: 200 * time.Millisecond, Work: 5 * time.Millisecond, Duration: 800 * time.Millisecond},
		Faults: []runner.ScheduledFault{
			{At: 200 * time.Millisecond, For: 200 * time.Millisecond, Fault: fault.Partition{Client: 0}},
		},
		Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Client: 1, Skip: 2, Action: failpoint.Pause(100 * time.Millisecond)}},
	}
	dir := t.TempDir()
	var w watcher
	if _, err := runner.Run(context.Background(), s, reference.NewTokenLock, runner.Options{Dir: dir, Watch: &w}); err != nil {
		t.Fatal(err)
	}
	ops := readHistory(t, dir)
	var recorded []history.Op
	type id struct {
		client int
		kind   history.Kind
		call   time.Duration
	}
	open := map[id]bool{}
	began := map[string]int{}
	for _, e := range w.told {
		key := id{e.op.Client, e.op.Kind, e.op.Call}
		if e.began {
			if e.op.Return != history.NeverReturned {
				t.Errorf("began %+v with a return", e.op)
			}
			open[key] = true
			began[string(e.op.Kind)+" "+e.op.Fault]++
			continue
		}
		delete(open, key)
		recorded = append(recorded, e.op)
	}
	if len(recorded) != len(ops) {
		t.Fatalf("told %d operations, the history holds %d", len(recorded), len(ops))
	}
	for i := range ops {
		if recorded[i].Kind != ops[i].Kind || recorded[i].Client != ops[i].Client || recorded[i].Call != ops[i].Call {
			t.Fatalf("operation %d told %+v, the history holds %+v", i, recorded[i], ops[i])
		}
	}
	if len(open) != 0 {
		t.Errorf("%d operations began and were never recorded", len(open))
	}
	releases := 0
	for _, op := range ops {
		if op.Kind == history.KindRelease {
			releases++
		}
	}
	if began["release "] != releases || began["fault client pause"] != 1 || began["fault "+fault.Partition{Client: 0}.String()] != 1 {
		t.Errorf("began %v; want each of the %d releases, the pause and the partition", began, releases)
	}
}

func TestResultLate(t *testing.T) {
	stalled := checker.Check{Checker: checker.CheckLock, Verdict: checker.Unknown, Detail: "the machine stalled client 0 for 900 ms; run again"}
	tests := []struct {
		name   string
		checks []checker.Check
		want   string // the checker of the verdict named, "" for none
	}{
		{"no verdict", nil, ""},
		{"ok", []checker.Check{{Checker: checker.CheckLock, Verdict: checker.OK}}, ""},
		{"unknown for a missing scenario", []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Unknown, Detail: "the fault was never injected"}}, ""},
		{"stalled", []checker.Check{{Checker: checker.CheckResource, Verdict: checker.OK}, stalled}, checker.CheckLock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := (&runner.Result{Checks: tt.checks}).Late()
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("Late = %+v, want none", *got)
			case tt.want != "" && (got == nil || got.Checker != tt.want):
				t.Errorf("Late = %v, want the %s verdict", got, tt.want)
			}
		})
	}
}
