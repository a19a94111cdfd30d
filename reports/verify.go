package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// Change is a verdict that re-checking a saved history did not reproduce.
type Change struct {
	Run      string // the run's name, as the table calls it
	Checker  string
	Was, Now checker.Verdict
}

// String says what changed in one line: "no-ttl/fixed: lock was illegal,
// is now ok".
func (c Change) String() string {
	return fmt.Sprintf("%s: %s was %s, is now %s", c.Run, c.Checker, c.Was, c.Now)
}

// Verification is what Verify found.
type Verification struct {
	// Runs are the folder's runs in the index's order: re-checked, or as
	// recorded for those Unread names.
	Runs []Run
	// Changes are the verdicts that re-checking did not reproduce.
	Changes []Change
	// Unread says, a line each, whose history could not be read or
	// re-checked (an old or unknown format, a run that never finished):
	// those runs keep the verdicts recorded, unchecked.
	Unread []error
}

// Code is the exit code of the verification: VerifyCode of its runs, and
// VerifyUnknown rather than VerifyOK when a history could not be read.
func (v Verification) Code() int {
	if code := VerifyCode(v.Runs); code != VerifyOK || len(v.Unread) == 0 {
		return code
	}
	return VerifyUnknown
}

// Verify re-runs every checker on the saved histories in dir, which is one
// run's folder or a report folder holding run folders; nothing is started.
// Each run's result.json, run.json, porcupine pages and run.html are
// rewritten from what the checkers say now, and so is the report's
// index.html (for a run's folder, its parent's, when it has one). A
// failing verdict keeps the kind (own or inherent) it was given when the
// reference lock ran, as long as the verdict is the same; telling a kind
// anew would need the reference lock to run again.
//
// In a report folder, a run whose history cannot be read (an old or
// unknown format) is listed in Unread and the others are re-checked; when
// no run's can be, or dir is one run's folder, that is an error of one line
// naming the file.
func Verify(dir string) (Verification, error) {
	var v Verification
	info, err := os.Stat(dir)
	if err != nil {
		return v, fmt.Errorf("verify: %w", err)
	}
	if !info.IsDir() {
		return v, fmt.Errorf("verify: %s is not a folder", dir)
	}
	report, single := dir, isRunFolder(dir)
	if single {
		report = filepath.Dir(dir)
	}
	folders := []string{dir}
	if !single {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return v, fmt.Errorf("verify: %w", err)
		}
		folders = folders[:0]
		for _, e := range entries {
			if f := filepath.Join(dir, e.Name()); e.IsDir() && isRunFolder(f) {
				folders = append(folders, f)
			}
		}
		if len(folders) == 0 {
			return v, fmt.Errorf("verify: %s holds no run (no folder with %s and %s)", dir, RunFile, runner.HistoryFile)
		}
	}
	for _, f := range folders {
		c, err := verifyRun(f)
		if err != nil {
			v.Unread = append(v.Unread, err)
		}
		v.Changes = append(v.Changes, c...)
	}
	if len(v.Unread) == len(folders) {
		if len(folders) > 1 {
			return v, fmt.Errorf("%w (and the %d other runs' histories)", v.Unread[0], len(folders)-1)
		}
		return v, v.Unread[0]
	}
	runs, err := LoadRuns(report)
	if err != nil {
		return v, fmt.Errorf("verify: %w", err)
	}
	if single {
		// Only this run is reported; its neighbours were not re-checked.
		var mine []Run
		for _, r := range runs {
			if same, _ := sameFolder(r.ReportDir, dir); same {
				mine = append(mine, r)
			}
		}
		if _, err := os.Stat(filepath.Join(report, IndexFile)); err != nil {
			// No report around the run: only its own page is rewritten.
			v.Runs = mine
			return v, WriteRunPages(report, mine)
		}
		v.Runs = mine
		return v, WriteIndex(report, runs)
	}
	v.Runs = runs
	return v, WriteIndex(report, runs)
}

// isRunFolder reports whether dir holds a saved run and its history.
func isRunFolder(dir string) bool {
	for _, name := range []string{RunFile, runner.HistoryFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

func sameFolder(a, b string) (bool, error) {
	ia, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	ib, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(ia, ib), nil
}

// verifyRun re-checks the history in folder and saves what the checkers
// say now, returning the verdicts that changed.
func verifyRun(folder string) ([]Change, error) {
	loaded, _, err := loadRun(folder)
	if loaded == nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	r := *loaded
	if r.Skipped != "" {
		return nil, nil // it never ran: there is nothing to re-check
	}
	path := filepath.Join(folder, runner.HistoryFile)
	ops, err := history.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	end := history.EndOf(ops)
	if end == nil {
		return nil, fmt.Errorf("verify: %s: the history has no end record (the run never finished)", path)
	}
	opts := checker.Options{Initial: end.Initial}
	if s, err := scenarios.Lookup(r.Scenario); err == nil {
		opts.Handover = s.Handover
	}
	checked := checker.Run(ops, opts)

	old := r.Result
	if old == nil {
		old = &runner.Result{Scenario: r.Scenario, Lock: r.Lock, Seed: r.Seed}
	}
	res := *old
	res.Dir = folder
	res.Checks = checked.Checks
	for i, c := range res.Checks {
		for _, was := range old.Checks {
			if was.Checker == c.Checker && was.Verdict == c.Verdict {
				res.Checks[i].Kind, res.Checks[i].KindWhy = was.Kind, was.KindWhy
			}
		}
	}
	res.Verdicts, res.Detect = checked.Verdicts(), checked.Detect()
	res.Stats = checker.Measure(ops)
	res.Spoiled, res.Missed = end.Spoiled, end.Missed

	var changes []Change
	for _, c := range checker.Checkers {
		if was, now := r.Verdicts[c], res.Verdicts[c]; was != now {
			changes = append(changes, Change{Run: r.Name(), Checker: c, Was: was, Now: now})
		}
	}

	if err := checked.WriteVisualizations(folder, ops); err != nil {
		return nil, fmt.Errorf("verify %s: %w", folder, err)
	}
	b, err := json.MarshalIndent(&res, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", folder, err)
	}
	if err := writeFileAtomic(filepath.Join(folder, runner.ResultFile), append(b, '\n')); err != nil {
		return nil, fmt.Errorf("verify %s: %w", folder, err)
	}
	again := fromResult(&res)
	again.Pitfall, again.Variant, again.Expected, again.Entry = r.Pitfall, r.Variant, r.Expected, r.Entry
	again.Lock, again.LockEntry = r.Lock, r.LockEntry
	again.DurationMS = r.DurationMS
	again.Pass = again.status() == asExpected
	if err := SaveRun(again); err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	return changes, nil
}

// WriteRunPages writes the page of each run, run.html, into the run's
// folder, with no index around them; dir is the report folder the pages
// link back to.
func WriteRunPages(dir string, runs []Run) error {
	var errs []error
	for _, r := range runs {
		st := readStory(r)
		errs = append(errs, writeRunPage(dir, r, newVariant(dir, r, mismatchesOf(r), st), st))
	}
	return errors.Join(errs...)
}

// Exit codes of a verification, after Jepsen's: every verdict ok, some
// verdict failing (illegal, stuck or slow), or none failing but some
// unknown.
const (
	VerifyOK        = 0
	VerifyViolation = 1
	VerifyUnknown   = 2
)

// VerifyCode is the exit code for runs: VerifyViolation when any verdict
// fails, else VerifyUnknown when any is unknown or a run has none, else
// VerifyOK.
func VerifyCode(runs []Run) int {
	code := VerifyOK
	for _, r := range runs {
		if len(r.Verdicts) == 0 {
			code = VerifyUnknown
		}
		for _, v := range r.Verdicts {
			switch {
			case checker.Failing(v):
				return VerifyViolation
			case v != checker.OK:
				code = VerifyUnknown
			}
		}
	}
	return code
}
