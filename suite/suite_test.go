package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// TestLockRefuses: what would stop a lock's suite halfway is refused before
// any run, without Redis, and nothing is written.
func TestLockRefuses(t *testing.T) {
	newLocker := reference.NewTokenLock
	out := t.TempDir()
	single := []cluster.Topology{cluster.Single}
	tests := []struct {
		name       string
		lock       string
		topologies []cluster.Topology
		opts       Options
		want       string
	}{
		{"no topology", "x", nil, Options{Out: out}, "no topology given"},
		{"unknown topology", "x", []cluster.Topology{"ring"}, Options{Out: out}, `unknown topology "ring"`},
		{"empty topology", "x", []cluster.Topology{""}, Options{Out: out}, `unknown topology ""`},
		{"no name", "", single, Options{Out: out}, `the lock's name "" cannot name a folder`},
		{"a path for a name", "../x", single, Options{Out: out}, "cannot name a folder"},
		{"no folder", "x", single, Options{}, "no report folder"},
		{"negative duration", "x", single, Options{Out: out, Duration: -time.Second}, "must not be negative"},
		{"too short", "x", []cluster.Topology{cluster.Replicated}, Options{Out: out, Duration: time.Second},
			"too short for scenario failover"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := Lock(context.Background(), tt.lock, newLocker, tt.topologies, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) || runs != nil {
				t.Errorf("runs %v, err %v: want %q", runs, err, tt.want)
			}
		})
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a refused suite wrote %v", entries)
	}
}

func TestMissingComponent(t *testing.T) {
	tests := []struct {
		err     error
		why     string
		missing bool
	}{
		{nil, "", false},
		{errors.New("boom"), "", false},
		{fmt.Errorf("run x: %w", local.ErrNoMariaDB), local.ErrNoMariaDB.Error(), true},
		{fmt.Errorf("run x: %w", local.ErrNoRedisServer), local.ErrNoRedisServer.Error(), true},
		{fmt.Errorf("run x: start: %w on the docker backend: none yet", cluster.ErrNoPostgres), cluster.ErrNoPostgres.Error() + " on the docker backend", true},
		{fmt.Errorf("run x: start zookeeper: %w: run `make deps`", local.ErrNoZooKeeper), local.ErrNoZooKeeper.Error() + ": run `make deps`", true},
	}
	for _, tt := range tests {
		why, missing := missingComponent(tt.err)
		if missing != tt.missing || !strings.HasPrefix(why, tt.why) {
			t.Errorf("missingComponent(%v) = %q, %v; want %q, %v", tt.err, why, missing, tt.why, tt.missing)
		}
	}
}

// noRedis makes every run of the test fail to start for want of
// redis-server.
func noRedis(t *testing.T) {
	t.Setenv("REDIS_SERVER", "")
	t.Setenv("PATH", t.TempDir())
}

// TestCatalogueSkips: without redis-server every case is skipped with the
// install hint, each in its own folder with its run.json, one progress line
// a case, and the index shows them all.
func TestCatalogueSkips(t *testing.T) {
	noRedis(t)
	ps, err := pitfalls.Lookup("no-release")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var progress bytes.Buffer
	runs, err := Catalogue(context.Background(), ps, Options{Out: out, Seed: 3, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	cases := p.Cases()
	if len(runs) != len(cases) {
		t.Fatalf("%d runs, want %d", len(runs), len(cases))
	}
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("progress:\n%s\nwant a line a case", progress.String())
	}
	for i, c := range cases {
		r := runs[i]
		if r.Pitfall != p.Name || r.Variant != c.Variant || r.Seed != 3 || r.Pass || !strings.Contains(r.Skipped, "make deps") {
			t.Errorf("run %d = %+v", i, r)
		}
		folder := fmt.Sprintf("%s-%s-%s", p.ID, p.Name, c.Variant)
		if r.ReportDir != filepath.Join(out, folder) {
			t.Errorf("run %d went to %s, want %s", i, r.ReportDir, folder)
		}
		if _, err := os.Stat(filepath.Join(out, folder, reports.RunFile)); err != nil {
			t.Error(err)
		}
		prefix := fmt.Sprintf("[%d/%d] %s %s in %s … skipped: ", i+1, len(cases), p.Name, c.Variant, c.Scenario)
		if !strings.HasPrefix(lines[i], prefix) {
			t.Errorf("progress line %q, want it to start %q", lines[i], prefix)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, reports.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `<span class="skipped">skipped</span>: redis-server`); n != len(cases) {
		t.Errorf("index.html shows %d skipped runs, want %d", n, len(cases))
	}
}

// TestLockSkips: a lock's suite goes through every scenario of its
// topologies, into <lock>-<scenario>, with seed 0 saved as 1; without
// redis-server each run is skipped and the index is rebuilt from every
// run folder, earlier ones too.
func TestLockSkips(t *testing.T) {
	noRedis(t)
	out := t.TempDir()
	var progress bytes.Buffer
	earlier, err := Lock(context.Background(), "other-lock", reference.NewTokenLock, []cluster.Topology{cluster.Redlock}, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Lock(context.Background(), "my-lock", reference.NewTokenLock, []cluster.Topology{cluster.Single}, Options{Out: out, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range scenarios.All() {
		if s.Topology == cluster.Single {
			want = append(want, s.Name)
		}
	}
	if len(runs) != len(want) || len(earlier) == 0 {
		t.Fatalf("%d runs, want one per single-node scenario (%d); %d earlier runs", len(runs), len(want), len(earlier))
	}
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	for i, r := range runs {
		if r.Lock != "my-lock" || r.Scenario != want[i] || r.Seed != 1 || r.Pass || r.Skipped == "" ||
			r.ReportDir != filepath.Join(out, "my-lock-"+want[i]) {
			t.Errorf("run %d = %+v", i, r)
		}
		prefix := fmt.Sprintf("[%d/%d] my-lock in %s … skipped: ", i+1, len(want), want[i])
		if i >= len(lines) || !strings.HasPrefix(lines[i], prefix) {
			t.Errorf("progress line %d does not start %q:\n%s", i, prefix, progress.String())
		}
	}
	all, err := reports.LoadRuns(out)
	if err != nil || len(all) != len(runs)+len(earlier) {
		t.Errorf("the folder holds %d runs (%v), want %d", len(all), err, len(runs)+len(earlier))
	}
	page, err := os.ReadFile(filepath.Join(out, reports.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`id="lock-my-lock"`, `id="lock-other-lock"`} {
		if !strings.Contains(string(page), id) {
			t.Errorf("index.html lacks %s", id)
		}
	}
}

// TestInterrupted: a suite whose context is done makes no run, says so, and
// still writes the index.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	var progress bytes.Buffer
	runs, err := Lock(ctx, "my-lock", reference.NewTokenLock, []cluster.Topology{cluster.Single}, Options{Out: out, Progress: &progress})
	if !errors.Is(err, context.Canceled) || len(runs) != 0 || progress.Len() != 0 {
		t.Errorf("runs %v, err %v, progress %q", runs, err, progress.String())
	}
	if _, err := os.Stat(filepath.Join(out, reports.IndexFile)); err != nil {
		t.Error(err)
	}
}

// TestKeep: a run folder that runner.Run wrote becomes a lock run the
// report shows, with its run.json and run.html; a folder without a result
// is an error of one line.
func TestKeep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "explore-token-single-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	res := runner.Result{Scenario: "explore", Seed: 5, Duration: time.Second, Dir: "/scratch/1",
		Verdicts: map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.OK,
			checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runner.ResultFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Keep(dir, "token"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, reports.RunPageFile)); err != nil {
		t.Error(err)
	}
	runs, err := reports.LoadRuns(filepath.Dir(dir))
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, err %v", runs, err)
	}
	if r := runs[0]; r.Lock != "token" || r.Scenario != "explore" || r.Seed != 5 || r.Pass || r.ReportDir != dir {
		t.Errorf("kept run = %+v", r)
	}
	err = Keep(t.TempDir(), "token")
	if err == nil || !strings.HasPrefix(err.Error(), "keep run: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("keep of a folder without a result: %v", err)
	}
}

// TestParallel makes real runs four at a time: they come back in the
// catalogue's order, as expected, and a run that is not as expected (here
// a case that expects the fixed lock to fail, so on every run) is made
// again alone and says what it was in parallel.
func TestParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	var ps []pitfalls.Pitfall
	for _, id := range []string{"1", "2"} {
		p, err := pitfalls.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p...)
	}
	wrong := ps[1]
	wrong.ID, wrong.Name = "x", "wrong-expectation"
	wrong.Catches = map[string]checker.Verdict{checker.CheckLock: checker.Illegal}
	wrong.Broken, wrong.Controls = "token-watchdog", nil
	wrong.Fixes = nil
	ps = append(ps, wrong)
	var progress bytes.Buffer
	runs, err := Catalogue(context.Background(), ps, Options{Out: t.TempDir(), Parallel: 4, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range ps {
		for _, c := range p.Cases() {
			want = append(want, p.Name+"/"+string(c.Variant))
		}
	}
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d:\n%s", len(runs), len(want), progress.String())
	}
	for i, r := range runs {
		if got := r.Pitfall + "/" + string(r.Variant); got != want[i] {
			t.Errorf("run %d is %s, want %s", i, got, want[i])
		}
		last := i == len(runs)-1
		if r.Pass == last {
			t.Errorf("%s: pass %v, want %v", want[i], r.Pass, !last)
		}
		if last && !strings.HasPrefix(r.Alone, "NOT as expected") {
			t.Errorf("%s: Alone = %q, want what the parallel run showed", want[i], r.Alone)
		}
	}
	if !strings.Contains(progress.String(), "[again alone] wrong-expectation broken in ") {
		t.Errorf("progress does not say the unsettled run was made again alone:\n%s", progress.String())
	}
}
