package merge

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
)

// TestShardsFold: bugs of one signature are one; a bug named with faults
// another shard showed it does not need folds into that one, and so do the
// runs counted to it; the campaign's shards must agree and not repeat.
func TestShardsFold(t *testing.T) {
	shard := func(sh string, bugs ...explore.Bug) *explore.Report {
		return &explore.Report{Lock: "l", Topology: cluster.Single, Seed: 3, Faults: "every kind", Shard: sh, Runs: 10, Own: len(bugs), CutShort: 2, WallS: 60, Bugs: bugs}
	}
	bug := func(sig string, firstRun int) explore.Bug {
		return explore.Bug{Signature: sig, FirstRun: firstRun, Runs: 1, Replay: sig, Found: explore.Found{Run: firstRun}}
	}
	a := shard("0/3", bug("lock illegal · slow work + pause holder", 0), bug("liveness stuck · crash", 6))
	b := shard("1/3", bug("lock illegal · slow work", 4), bug("liveness stuck · crash", 1))
	runs := []explore.RunRecord{{Run: 0, Bug: "lock illegal · slow work + pause holder"}, {Run: 1, Bug: "liveness stuck · crash"}}
	rep, merged, missing, err := Shards([]*explore.Report{a, b}, runs)
	if err != nil {
		t.Fatal(err)
	}
	want := []explore.Bug{{Signature: "lock illegal · slow work", FirstRun: 0, Runs: 2}, {Signature: "liveness stuck · crash", FirstRun: 1, Runs: 2}}
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
	if rep.Runs != 20 || rep.WallS != 60 || rep.RunsPerMin != 20 || rep.CutShort != 4 {
		t.Errorf("%d runs in %.0f s, %.0f a minute, %d cut short; want 20 in 60 s, 20, 4", rep.Runs, rep.WallS, rep.RunsPerMin, rep.CutShort)
	}
	for name, shards := range map[string][]*explore.Report{
		"twice":       {a, shard("0/3")},
		"other seed":  {a, {Lock: "l", Topology: cluster.Single, Seed: 4, Faults: "every kind", Shard: "1/3"}},
		"other split": {a, shard("1/2")},
		"whole":       {a, shard("")},
	} {
		if _, _, _, err := Shards(shards, nil); err == nil {
			t.Errorf("%s: merged", name)
		}
	}
	if _, _, _, err := Shards([]*explore.Report{a, b}, []explore.RunRecord{{Run: 3}, {Run: 3}}); err == nil {
		t.Error("a run listed twice merged")
	}
}

// TestReadReportOldNames reads shard reports written before the word was
// missed, which count such runs as quiet, and ones written after, and
// merges an old shard with a new one.
func TestReadReportOldNames(t *testing.T) {
	tests := []struct {
		name   string
		shard  string
		missed int
	}{
		{"quiet", `{"lock":"l","shard":"0/2","runs":10,"quiet":3}`, 3},
		{"missed", `{"lock":"l","shard":"1/2","runs":10,"missed":4}`, 4},
		{"neither", `{"lock":"l","runs":10}`, 0},
	}
	var shards []*explore.Report
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "report.json")
			if err := os.WriteFile(file, []byte(tt.shard), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := ReadReport(file)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Runs != 10 || rep.Missed != tt.missed {
				t.Errorf("%d runs, %d missed; want 10, %d", rep.Runs, rep.Missed, tt.missed)
			}
			if rep.Shard != "" {
				shards = append(shards, rep)
			}
		})
	}
	rep, _, _, err := Shards(shards, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Missed != 7 {
		t.Errorf("merged %d missed, want 7", rep.Missed)
	}
}
