package explore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
)

func TestScheduleDeterministic(t *testing.T) {
	for _, tc := range []struct {
		topology cluster.Topology
		nested   bool
	}{
		{cluster.Single, false},
		{cluster.Single, true},
		{cluster.Replicated, false},
		{cluster.Redlock, false},
	} {
		t.Run(string(tc.topology), func(t *testing.T) {
			distinct := map[string]bool{}
			for seed := int64(1); seed <= 200; seed++ {
				a, b := Schedule(tc.topology, tc.nested, seed), Schedule(tc.topology, tc.nested, seed)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("seed %d drew two plans:\n%s\n%s", seed, a, b)
				}
				if len(a.Faults) == 0 || len(a.Faults) > 3 {
					t.Errorf("seed %d drew %d faults, want 1 to 3", seed, len(a.Faults))
				}
				if a.Workload.Nested != tc.nested {
					t.Errorf("seed %d: nested workload %v, want %v", seed, a.Workload.Nested, tc.nested)
				}
				s := a.Scenario()
				if err := s.Validate(); err != nil {
					t.Errorf("seed %d: %v", seed, err)
				}
				for _, fp := range s.Failpoints {
					if !fp.Optional {
						t.Errorf("seed %d: failpoint %s is not optional", seed, fp)
					}
				}
				if s.Workload.Duration < s.MinDuration {
					t.Errorf("seed %d: workload of %s shorter than its story's %s", seed, s.Workload.Duration, s.MinDuration)
				}
				if n := strings.Count(a.String(), "crashes"); n > 1 {
					t.Errorf("seed %d drew %d crashes, want at most 1: %s", seed, n, a)
				}
				distinct[a.String()] = true
			}
			if len(distinct) < 190 {
				t.Errorf("200 seeds drew only %d distinct plans", len(distinct))
			}
		})
	}
}

// TestScheduleKinds checks that every kind a topology supports is drawn,
// and none it does not.
func TestScheduleKinds(t *testing.T) {
	for _, topology := range []cluster.Topology{cluster.Single, cluster.Replicated, cluster.Redlock} {
		t.Run(string(topology), func(t *testing.T) {
			drawn := map[string]bool{}
			for seed := int64(1); seed <= 500; seed++ {
				for _, f := range Schedule(topology, false, seed).Faults {
					drawn[f.Kind] = true
				}
			}
			for _, k := range Kinds() {
				want := k.Topologies == nil || slices.Contains(k.Topologies, topology)
				if drawn[k.Name] != want {
					t.Errorf("kind %s drawn: %v, want %v", k.Name, drawn[k.Name], want)
				}
			}
		})
	}
}

// TestSpace checks that a space draws only its kinds, that a replay draws
// the same plan from the same space, and that an unknown kind is refused
// with the known ones listed.
func TestSpace(t *testing.T) {
	for _, tc := range []struct {
		faults []string
		want   func(kind string) bool
		text   string
	}{
		{nil, func(string) bool { return true }, "every kind"},
		{[]string{"-slow-work"}, func(k string) bool { return k != "slow-work" }, "every kind but slow-work"},
		{[]string{"slow-work,pause-holder"}, func(k string) bool { return k == "slow-work" || k == "pause-holder" }, "only slow-work, pause-holder"},
		{[]string{"crash", "crash-acquire"}, func(k string) bool { return k == "crash" || k == "crash-acquire" }, "only crash, crash-acquire"},
		{[]string{"slow-work", "pause-holder", "-pause-holder"}, func(k string) bool { return k == "slow-work" }, "only slow-work, pause-holder but pause-holder"},
	} {
		space, err := NewSpace(tc.faults)
		if err != nil {
			t.Fatalf("NewSpace(%q): %v", tc.faults, err)
		}
		if space.String() != tc.text {
			t.Errorf("NewSpace(%q) says %q, want %q", tc.faults, space, tc.text)
		}
		for seed := int64(1); seed <= 200; seed++ {
			p := space.Schedule(cluster.Single, false, seed)
			if len(p.Faults) == 0 {
				t.Errorf("%s: seed %d drew no fault", space, seed)
			}
			for _, f := range p.Faults {
				if !tc.want(f.Kind) {
					t.Errorf("%s: seed %d drew %s", space, seed, f.Kind)
				}
			}
			again, err := (Replay{Seed: seed}).PlanIn(space, cluster.Single, false)
			if err != nil || !reflect.DeepEqual(again, p) {
				t.Errorf("%s: the replay of seed %d drew another plan (%v)", space, seed, err)
			}
		}
	}
	_, err := NewSpace([]string{"slow-work,bogus"})
	if err == nil || !strings.Contains(err.Error(), `"bogus"`) || !strings.Contains(err.Error(), "pause-holder") {
		t.Errorf("an unknown kind: error %v, want it named with the known kinds", err)
	}
	only, _ := NewSpace([]string{"failover"})
	if only.Check(cluster.Single) == nil || only.Check(cluster.Replicated) != nil {
		t.Errorf("a space of failovers alone: single refused %v, replicated refused %v", only.Check(cluster.Single), only.Check(cluster.Replicated))
	}
	if _, err := Run(context.Background(), Config{New: locks.Reference(cluster.Single, false).New, Faults: []string{"bogus"}, run: fakeRun()}); err == nil {
		t.Error("Run took an unknown fault kind")
	}
}

func TestReplayRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Replay
	}{
		{"42", Replay{Seed: 42}},
		{"42:0,2", Replay{Seed: 42, Keep: []int{0, 2}}},
		{"42:", Replay{Seed: 42, Keep: []int{}}},
	} {
		got, err := ParseReplay(tc.text)
		if err != nil {
			t.Fatalf("ParseReplay(%q): %v", tc.text, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseReplay(%q) = %#v, want %#v", tc.text, got, tc.want)
		}
		if got.String() != tc.text {
			t.Errorf("ParseReplay(%q).String() = %q", tc.text, got.String())
		}
	}
	for _, bad := range []string{"", "x", "0", "-3", "42:a", "42:1,,2", "42:-1", "1.5"} {
		if _, err := ParseReplay(bad); err == nil {
			t.Errorf("ParseReplay(%q) accepted it", bad)
		}
	}
	p := Schedule(cluster.Single, false, 42)
	if _, err := (Replay{Seed: 42, Keep: []int{len(p.Faults)}}).Plan(cluster.Single, false); err == nil {
		t.Errorf("a replay keeping fault %d of %d was accepted", len(p.Faults), len(p.Faults))
	}
}

func TestKeeping(t *testing.T) {
	var p Plan
	for seed := int64(1); len(p.Faults) < 3; seed++ {
		p = Schedule(cluster.Single, false, seed)
	}
	kept, err := p.Keeping([]int{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := kept.Kept(); len(got) != 2 || got[0].What != p.Faults[0].What || got[1].What != p.Faults[2].What {
		t.Errorf("kept %v", got)
	}
	if r := kept.Replay().String(); !strings.HasSuffix(r, ":0,2") {
		t.Errorf("replay %s, want it to keep 0 and 2", r)
	}
	none, _ := p.Keeping([]int{})
	if s := none.Scenario(); len(s.Failpoints)+len(s.Faults) != 0 {
		t.Errorf("a plan keeping nothing arms %d failpoints and %d faults", len(s.Failpoints), len(s.Faults))
	}
}

// fakeRun is a harness.Run that fails the lock checker with an own
// violation exactly when the scenario keeps a fault it names.
func fakeRun(culprits ...string) func(context.Context, harness.Scenario, harness.NewLocker, harness.Options) (*harness.Result, error) {
	return func(_ context.Context, s harness.Scenario, _ harness.NewLocker, opts harness.Options) (*harness.Result, error) {
		res := &harness.Result{Scenario: s.Name, Seed: opts.Seed}
		c := check.Check{Checker: check.CheckLock, Verdict: check.OK}
		for _, culprit := range culprits {
			if strings.Contains(s.Description, culprit) {
				c = check.Check{Checker: check.CheckLock, Verdict: check.Illegal, Kind: check.Own}
			}
		}
		res.Checks = []check.Check{c, {Checker: check.CheckLiveness, Verdict: check.OK}}
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, err
		}
		return res, os.WriteFile(filepath.Join(opts.Dir, "result.json"), []byte("{}\n"), 0o644)
	}
}

func TestShrink(t *testing.T) {
	// A seed whose plan drew three faults; the fake fails the lock when the
	// middle one is kept.
	var p Plan
	for seed := int64(1); len(p.Faults) != 3 || p.Faults[1].What == p.Faults[0].What || p.Faults[1].What == p.Faults[2].What; seed++ {
		p = Schedule(cluster.Single, false, seed)
	}
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
		Replay: &Replay{Seed: p.Seed}, Dir: dir, run: fakeRun(p.Faults[1].What)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Own != 1 || rep.First == nil {
		t.Fatalf("report %+v, want one own run", rep)
	}
	// A replay is not shrunk; an exploration that draws the seed is.
	e := &explorer{cfg: Config{run: fakeRun(p.Faults[1].What), New: locks.Reference(cluster.Single, false).New}, rep: &Report{}, scratch: t.TempDir()}
	first, err := e.try(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	small, o, reruns := e.shrink(context.Background(), p, first)
	if got := small.Replay(); !slices.Equal(got.Keep, []int{1}) {
		t.Errorf("shrunk to %s, want only fault 1 kept", got)
	}
	if reruns != 3 {
		t.Errorf("%d reruns, want 3 (one per fault)", reruns)
	}
	if len(o.own) != 1 {
		t.Errorf("the smallest run's own checks: %v", o.own)
	}
	if _, err := os.Stat(filepath.Join(dir, FolderName("fake", cluster.Single), "result.json")); err != nil {
		t.Errorf("the own run's folder was not kept: %v", err)
	}
}

// TestShrinkToNothing checks that a violation no fault causes shrinks to
// no fault at all, one rerun per drawn fault.
func TestShrinkToNothing(t *testing.T) {
	p := Schedule(cluster.Single, false, 1)
	e := &explorer{cfg: Config{run: fakeRun("clients"), New: locks.Reference(cluster.Single, false).New}, rep: &Report{}, scratch: t.TempDir()}
	first, err := e.try(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	small, _, reruns := e.shrink(context.Background(), p, first)
	if got := small.Replay(); got.Keep == nil || len(got.Keep) != 0 {
		t.Errorf("shrunk to %s, want no fault kept", got)
	}
	if reruns != len(p.Faults) || reruns > maxShrink {
		t.Errorf("%d reruns for %d faults", reruns, len(p.Faults))
	}
}

func TestRunStopsAtFirstOwn(t *testing.T) {
	for _, keepGoing := range []bool{false, true} {
		rep, err := Run(context.Background(), Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
			Runs: 5, Seed: 3, KeepGoing: keepGoing, run: fakeRun("clients")})
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if keepGoing {
			want = 5
		}
		if rep.Runs != want || rep.Own != want || rep.FirstOwnS == nil || rep.Replay == "" {
			t.Errorf("keep going %v: report %+v, want %d own runs", keepGoing, rep, want)
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
	alternate := func(ctx context.Context, s harness.Scenario, l harness.NewLocker, opts harness.Options) (*harness.Result, error) {
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
	if rep.Runs != 3 || rep.Own != 0 || rep.Flaky != 3 || rep.FirstOwnS != nil {
		t.Errorf("report %+v, want 3 flaky runs and no own one", rep)
	}
}

func TestProgress(t *testing.T) {
	for _, tc := range []struct {
		terminal bool
		want     []string
	}{
		{false, []string{"run 1 (replay ", "): ok\n", "run 2 (replay "}},
		{true, []string{"\r\033[Kruns 1 of 2, own 0, inherent 0, unknown 0", "\r\033[Kruns 2 of 2, own 0, inherent 0, unknown 0\n"}},
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
