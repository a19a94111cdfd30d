package explore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore/schedule"
)

// Shard is one share of an exploration split over Count processes, as a
// Kubernetes Indexed Job runs it: Index is the completion index, from 0.
type Shard struct {
	Index int
	Count int
}

// ParseShard reads a shard as -shard gives it: "I/N", with 0 <= I < N.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q is not I/N (e.g. 0/4)", s)
	}
	sh := Shard{Index: index, Count: count}
	return sh, sh.check()
}

func (s Shard) check() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d: want 0 <= index < count", s.Index, s.Count)
	}
	return nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// split reports whether s is a share of a larger exploration.
func (s Shard) split() bool { return s.Count > 1 }

// has reports whether run number i is the shard's.
func (s Shard) has(i int) bool { return !s.split() || i%s.Count == s.Index }

// share is how many of a campaign's first runs are the shard's.
func (s Shard) share(runs int) int {
	if !s.split() {
		return runs
	}
	return max(0, (runs-s.Index+s.Count-1)/s.Count)
}

// RunRecord is one run of an exploration as its runs file lists it: enough
// to tell that a sharded campaign made the same runs as one process, and
// to count them again when shards are merged.
type RunRecord struct {
	Run  int   `json:"run"`  // the run's number in the exploration (Plan.Run)
	Seed int64 `json:"seed"` // its schedule's seed
	// Replay makes the run again (-replay): the seed with the format
	// version it was drawn at ("v1:SEED"). A bare seed is of version 1,
	// which a build with kinds of a later version draws otherwise.
	Replay string `json:"replay"`
	// Outcome is own, inherent, untold, unknown or ok as the report counts
	// runs; flaky for an own violation its rerun did not show; error for a
	// run that could not run.
	Outcome string `json:"outcome"`
	Struck  bool   `json:"struck"` // a drawn fault struck
	// Failing names each failing check: "lock illegal (own)".
	Failing []string `json:"failing,omitempty"`
	// Bug is the signature of the bug the run was counted to, as it was
	// known when the run was judged (a later shrink may name it with fewer
	// faults).
	Bug   string `json:"bug,omitempty"`
	Error string `json:"error,omitempty"`
	// Unknown says why each unknown verdict is unknown: what of the
	// scenario did not happen, or the check's own detail.
	Unknown []string `json:"unknown,omitempty"`
	// Untold says, one line for each failing check left untold, what the
	// history could not decide: which node and which reply left an
	// overlap open, or why no reference settled it.
	Untold []string `json:"untold,omitempty"`
	// Missed says why no drawn fault struck (Struck false), or why one of
	// them did not: the lock never reached its failpoint, or no relay
	// reads the program's requests.
	Missed []string `json:"missed,omitempty"`
}

// recordOf is plan's run with outcome o, counted to the bug sig ("" for none).
func recordOf(plan schedule.Plan, o outcome, sig string) RunRecord {
	r := RunRecord{Run: plan.Run, Seed: plan.Seed, Replay: plan.Replay().String(), Outcome: o.class(), Struck: o.struck, Bug: sig}
	for _, c := range o.failing() {
		kind := string(c.Kind)
		if kind == "" {
			kind = "untold"
			r.Untold = append(r.Untold, fmt.Sprintf("%s: %s", c.Checker, c.KindWhy))
		}
		r.Failing = append(r.Failing, fmt.Sprintf("%s %s (%s)", c.Checker, c.Verdict, kind))
	}
	if o.res == nil {
		return r
	}
	if o.unknown {
		r.Unknown = append(r.Unknown, o.res.Spoiled...)
		for _, c := range o.res.Checks {
			if c.Verdict == checker.Unknown && len(o.res.Spoiled) == 0 {
				r.Unknown = append(r.Unknown, fmt.Sprintf("%s: %s", c.Checker, c.Detail))
			}
		}
	}
	r.Missed = o.res.Missed
	if !o.struck && len(r.Missed) == 0 {
		r.Missed = []string{"no drawn fault struck: the run's history records none"}
	}
	return r
}

// ReportFileName is the name of the file, under Config.Dir, that holds an
// exploration's report as JSON.
func ReportFileName(lock string, t cluster.Topology) string {
	return folderPrefix(lock, t) + "report.json"
}

// RunsFileName is the name of the file, under Config.Dir, that lists an
// exploration's runs (RunRecord), one JSON object a line.
func RunsFileName(lock string, t cluster.Topology) string {
	return folderPrefix(lock, t) + "runs.jsonl"
}

// record writes r to the runs file, when the exploration keeps one. The
// first error is kept for the end of the exploration: losing the list
// must not lose the runs.
func (e *explorer) record(r RunRecord) {
	if e.runs == nil || e.runsErr != nil {
		return
	}
	e.runsErr = WriteRuns(e.runs, r)
}

// openRuns starts the runs file of an exploration that writes a folder.
func (e *explorer) openRuns() error {
	if e.cfg.Dir == "" || e.cfg.Replay != nil {
		return nil
	}
	name := filepath.Join(e.cfg.Dir, RunsFileName(e.cfg.Lock, e.cfg.Topology))
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	e.runs, e.rep.RunsFile = f, name
	return nil
}

// closeRuns ends the runs file and writes the report next to it.
func (e *explorer) closeRuns() error {
	if e.runs == nil {
		return nil
	}
	if err := errors.Join(e.runsErr, e.runs.Close(), WriteReport(e.cfg.Dir, e.rep)); err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	return nil
}

// WriteReport writes rep as JSON into dir, named ReportFileName.
func WriteReport(dir string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ReportFileName(rep.Lock, rep.Topology)), append(b, '\n'), 0o644)
}

// WriteRuns writes runs to w as a runs file lists them: one JSON object a
// line.
func WriteRuns(w io.Writer, runs ...RunRecord) error {
	enc := json.NewEncoder(w)
	for _, r := range runs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}
