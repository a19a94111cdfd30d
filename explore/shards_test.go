package explore_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/explore/merge"
	"github.com/locklab/locklab/explore/schedule"
	"github.com/locklab/locklab/locks"
)

// TestShardsMakeTheRunsOfOne: three shards with the same seed make exactly
// the runs one process makes, each with the same seed and outcome, and
// their merged report counts and names the same bugs.
func TestShardsMakeTheRunsOfOne(t *testing.T) {
	shard := func(sh explore.Shard, parallel int) (*explore.Report, []explore.RunRecord) {
		dir := t.TempDir()
		rep, err := explore.RunWith(context.Background(), explore.Config{Lock: "fake", New: locks.Reference(cluster.Single, false).New,
			Runs: 40, Seed: 5, Shard: sh, Parallel: parallel, Dir: dir}, explore.SlowSectionIsOwn)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := merge.ReadRuns(filepath.Join(dir, explore.RunsFileName("fake", cluster.Single)))
		if err != nil {
			t.Fatal(err)
		}
		return rep, runs
	}
	whole, wholeRuns := shard(explore.Shard{}, 1)
	if len(whole.Bugs) == 0 || whole.Runs != 40 {
		t.Fatalf("the whole exploration made %d runs and found %d bugs; want 40 and some", whole.Runs, len(whole.Bugs))
	}
	for _, r := range wholeRuns {
		// The runs file says how to make each run again, version and all.
		if rp, err := schedule.ParseReplay(r.Replay); err != nil || rp.Seed != r.Seed || rp.Version != schedule.ReplayVersion || rp.Keep != nil {
			t.Errorf("run %d, seed %d: replay %q reads as %+v (%v), want seed %d of version %d", r.Run, r.Seed, r.Replay, rp, err, r.Seed, schedule.ReplayVersion)
		}
	}
	var shards []*explore.Report
	var runs []explore.RunRecord
	for i := range 3 {
		rep, rs := shard(explore.Shard{Index: i, Count: 3}, 1+i) // parallelism must not matter
		if rep.Shard != (explore.Shard{Index: i, Count: 3}).String() {
			t.Errorf("shard %d's report says shard %q", i, rep.Shard)
		}
		for _, r := range rs {
			if r.Run%3 != i {
				t.Errorf("shard %d made run %d", i, r.Run)
			}
		}
		shards, runs = append(shards, rep), append(runs, rs...)
	}
	merged, mergedRuns, missing, err := merge.Shards(shards, runs)
	if err != nil || len(missing) > 0 {
		t.Fatalf("merge: %v, missing %v", err, missing)
	}
	same := func(a, b explore.RunRecord) bool {
		return a.Run == b.Run && a.Seed == b.Seed && a.Replay == b.Replay && a.Outcome == b.Outcome && slices.Equal(a.Failing, b.Failing)
	}
	if !slices.EqualFunc(mergedRuns, wholeRuns, same) {
		t.Errorf("the shards' runs differ from the whole's:\n%v\n%v", mergedRuns, wholeRuns)
	}
	if merged.Runs != whole.Runs || merged.Own != whole.Own || merged.Missed != whole.Missed {
		t.Errorf("merged %d runs, %d own, %d missed; whole %d, %d, %d", merged.Runs, merged.Own, merged.Missed, whole.Runs, whole.Own, whole.Missed)
	}
	signatures := func(bugs []explore.Bug) []string {
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
