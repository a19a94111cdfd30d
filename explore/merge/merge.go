// Package merge builds one exploration report out of the reports and runs
// files of a campaign's shards (explore.Config.Shard), as `check merge`
// does: the runs counted together and the bugs folded into one list. It
// only reads what the shards wrote.
package merge

import (
	"bufio"
	"encoding/json"
	"os"

	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/explore"
)

// Shards builds one report from the reports of a campaign's shards and
// their runs: the runs counted together, sorted by number, and the bugs as
// one list. A bug two shards both found is listed once; a bug one shard
// named with faults another shard's shrink showed it does not need is
// folded into that one, as a single exploration folds it. Missing lists
// the shards of the campaign no report was given for. Merge refuses
// reports of different explorations, a shard given twice, and a run
// listed twice.
func Shards(shards []*explore.Report, runs []explore.RunRecord) (rep *explore.Report, merged []explore.RunRecord, missing []int, err error) {
	if len(shards) == 0 {
		return nil, nil, nil, errors.New("merge: no shard report")
	}
	count, err := sameCampaign(shards)
	if err != nil {
		return nil, nil, nil, err
	}
	first := shards[0]
	rep = &explore.Report{Lock: first.Lock, Command: first.Command, Topology: first.Topology, Seed: first.Seed, Faults: first.Faults, Shards: len(shards), Bugs: []explore.Bug{}}
	have := map[int]bool{}
	var all []explore.Bug
	for _, s := range shards {
		sh, _ := explore.ParseShard(s.Shard) // sameCampaign read it
		have[sh.Index] = true
		rep.Runs += s.Runs
		rep.Own += s.Own
		rep.Inherent += s.Inherent
		rep.Untold += s.Untold
		rep.Unknown += s.Unknown
		rep.Missed += s.Missed
		rep.Flaky += s.Flaky
		rep.Again += s.Again
		rep.Errors += s.Errors
		rep.CutShort += s.CutShort
		rep.Parallel += s.Parallel
		// The shards run side by side: the campaign lasts as its longest.
		rep.WallS = max(rep.WallS, s.WallS)
		all = append(all, s.Bugs...)
	}
	for i := range count {
		if !have[i] {
			missing = append(missing, i)
		}
	}
	if rep.WallS > 0 {
		rep.RunsPerMin = float64(rep.Runs) / rep.WallS * 60
	}
	rep.Bugs = foldBugs(all)
	if len(rep.Bugs) > 0 {
		b := rep.Bugs[0]
		found := b.Found
		rep.First, rep.Replay, rep.ReportDir = &found, b.Replay, b.ReportDir
		firstS := slices.MinFunc(rep.Bugs, func(a, b explore.Bug) int { return cmp.Compare(a.FirstS, b.FirstS) }).FirstS
		rep.FirstOwnS = &firstS
	}
	merged, err = mergeRuns(runs, rep.Bugs)
	return rep, merged, missing, err
}

// sameCampaign checks that the reports are shards of one exploration, each
// once, and returns how many shards it has.
func sameCampaign(shards []*explore.Report) (int, error) {
	first := shards[0]
	seen := map[int]bool{}
	count := 0
	for _, s := range shards {
		if s.Shard == "" {
			return 0, fmt.Errorf("merge: the report of %s on %s, seed %d, is not a shard's", s.Lock, s.Topology, s.Seed)
		}
		sh, err := explore.ParseShard(s.Shard)
		if err != nil {
			return 0, fmt.Errorf("merge: %w", err)
		}
		switch {
		case s.Lock != first.Lock || s.Topology != first.Topology || s.Seed != first.Seed || s.Faults != first.Faults:
			return 0, fmt.Errorf("merge: shard %s explored %s on %s, seed %d, faults %s; shard %s explored %s on %s, seed %d, faults %s",
				first.Shard, first.Lock, first.Topology, first.Seed, first.Faults, s.Shard, s.Lock, s.Topology, s.Seed, s.Faults)
		case count != 0 && sh.Count != count:
			return 0, fmt.Errorf("merge: shard %s and shard %s split the campaign differently", first.Shard, s.Shard)
		case seen[sh.Index]:
			return 0, fmt.Errorf("merge: shard %s is given twice", s.Shard)
		}
		count, seen[sh.Index] = sh.Count, true
	}
	return count, nil
}

// foldBugs is the distinct bugs among bugs found by several shards, first
// found first: bugs of one signature are one, and a bug whose faults
// include all of another's of the same failure, and more, is that one.
func foldBugs(bugs []explore.Bug) []explore.Bug {
	var out []explore.Bug
	// Fewest faults first, so that each bug meets the bugs it folds into
	// before itself.
	slices.SortStableFunc(bugs, func(a, b explore.Bug) int {
		return cmp.Or(cmp.Compare(len(sigMarks(a.Signature)), len(sigMarks(b.Signature))), cmp.Compare(a.FirstRun, b.FirstRun))
	})
	for _, b := range bugs {
		i := slices.IndexFunc(out, func(o explore.Bug) bool { return explains(o.Signature, b.Signature) })
		if i < 0 {
			out = append(out, b)
			continue
		}
		o := &out[i]
		o.Runs += b.Runs
		o.FirstS = min(o.FirstS, b.FirstS)
		if b.FirstRun < o.FirstRun {
			o.FirstRun = b.FirstRun
			if b.Signature == o.Signature {
				// The same bug: the run one process would have shrunk first.
				o.Found, o.Replay, o.ReportDir = b.Found, b.Replay, b.ReportDir
			}
		}
	}
	slices.SortStableFunc(out, func(a, b explore.Bug) int { return cmp.Compare(a.FirstRun, b.FirstRun) })
	return out
}

// explains reports whether the bug named by sig is the one named by other:
// the same failure, with all of sig's faults among other's.
func explains(sig, other string) bool {
	f, _, _ := strings.Cut(sig, " · ")
	g, _, _ := strings.Cut(other, " · ")
	if f != g {
		return false
	}
	have := sigMarks(other)
	for _, m := range sigMarks(sig) {
		if !slices.Contains(have, m) {
			return false
		}
	}
	return true
}

// sigMarks is the faults a signature names, in words.
func sigMarks(sig string) []string {
	_, marks, _ := strings.Cut(sig, " · ")
	if marks == "no fault" {
		return nil
	}
	return strings.Split(marks, " + ")
}

// mergeRuns sorts runs by number, refuses a number given twice, and names
// each run's bug as the merged report does.
func mergeRuns(runs []explore.RunRecord, bugs []explore.Bug) ([]explore.RunRecord, error) {
	runs = slices.Clone(runs)
	slices.SortStableFunc(runs, func(a, b explore.RunRecord) int { return cmp.Compare(a.Run, b.Run) })
	for i := range runs {
		if i > 0 && runs[i].Run == runs[i-1].Run {
			return nil, fmt.Errorf("merge: run %d is listed twice", runs[i].Run)
		}
		if sig := runs[i].Bug; sig != "" {
			// The bug that explains it with the most faults of its own.
			best := -1
			for j, b := range bugs {
				if explains(b.Signature, sig) && (best < 0 || len(sigMarks(b.Signature)) > len(sigMarks(bugs[best].Signature))) {
					best = j
				}
			}
			if best >= 0 {
				runs[i].Bug = bugs[best].Signature
			}
		}
	}
	return runs, nil
}

// ReadReport reads a report explore.WriteReport wrote.
func ReadReport(file string) (*explore.Report, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var rep explore.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &rep, nil
}

// ReadRuns reads a runs file explore.WriteRuns wrote.
func ReadRuns(file string) ([]explore.RunRecord, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var runs []explore.RunRecord
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var r explore.RunRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		runs = append(runs, r)
	}
	return runs, sc.Err()
}
