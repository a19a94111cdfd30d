package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/locklab/locklab/history"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/runner"
)

// RunFile is the file SaveRun writes into a run's folder: the run's JSON,
// which is all LoadRuns needs to put the run in the index again.
const RunFile = "run.json"

// SaveRun writes r as JSON into r.ReportDir/run.json, so that a later index
// of the report folder can show the run even when another invocation
// wrote the index.
func SaveRun(r Run) error {
	if r.ReportDir == "" {
		return fmt.Errorf("save run %s: it has no report folder", r.Name())
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("save run %s: %w", r.Name(), err)
	}
	if err := os.MkdirAll(r.ReportDir, 0o755); err != nil {
		return fmt.Errorf("save run %s: %w", r.Name(), err)
	}
	if err := writeFileAtomic(filepath.Join(r.ReportDir, RunFile), append(b, '\n')); err != nil {
		return fmt.Errorf("save run %s: %w", r.Name(), err)
	}
	return nil
}

// LoadRuns reads every run the report folder dir holds: each subfolder with
// a run.json, as SaveRun wrote it. Each run gets back its catalogue or lock
// entry (by name, when the catalogue or the lock registry has it), its
// report folder as found under dir, and its harness result from result.json
// when there is one. When two folders hold the same pitfall, variant and
// scenario, or the same lock and scenario, the newer run.json wins.
// Catalogue cases come first, by pitfall ID (catalogue order among pitfalls
// of one ID), then in the order of the pitfall's cases; runs of pitfalls the catalogue no longer
// has come after them. Lock runs come last, by lock in registry order (other
// locks by name), then by scenario name.
//
// LoadRuns returns every run it could read; the error, on one line, names
// the folders it had to leave out or could only read in part. A folder that
// does not exist holds no runs.
func LoadRuns(dir string) ([]Run, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load runs: %w", err)
	}
	type loaded struct {
		run     Run
		order   [3]int
		folder  string
		modTime time.Time
	}
	newest := map[string]loaded{}
	var problems loadErrors
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		folder := filepath.Join(dir, e.Name())
		r, modTime, err := loadRun(folder)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not a run folder, or a run that never finished
		}
		if err != nil {
			problems = append(problems, err)
			if r == nil {
				continue
			}
		}
		key := r.Pitfall + "\x00" + string(r.Variant) + "\x00" + r.Lock + "\x00" + r.Scenario
		if old, ok := newest[key]; ok && !modTime.After(old.modTime) {
			continue
		}
		newest[key] = loaded{run: *r, folder: e.Name(), modTime: modTime}
	}

	cat, registry := pitfalls.Catalogue(), locks.All()
	all := make([]loaded, 0, len(newest))
	for _, l := range newest {
		l.order = runOrder(l.run, cat, registry)
		all = append(all, l)
	}
	slices.SortFunc(all, func(a, b loaded) int {
		if c := slices.Compare(a.order[:], b.order[:]); c != 0 {
			return c
		}
		if c := strings.Compare(a.run.Lock, b.run.Lock); c != 0 {
			return c
		}
		if c := strings.Compare(a.run.Scenario, b.run.Scenario); a.run.Lock != "" && c != 0 {
			return c
		}
		return strings.Compare(a.folder, b.folder)
	})
	runs := make([]Run, len(all))
	for i, l := range all {
		runs[i] = l.run
	}
	if len(problems) > 0 {
		return runs, problems
	}
	return runs, nil
}

// runOrder places r among the runs LoadRuns returns: catalogue cases by
// pitfall, then by case; then pitfalls the catalogue no longer has; then
// lock runs, by lock in registry order, locks it lacks last.
func runOrder(r Run, cat []pitfalls.Pitfall, registry []locks.Lock) [3]int {
	if r.Lock != "" {
		i := slices.IndexFunc(registry, func(l locks.Lock) bool { return l.Name == r.Lock })
		if i < 0 {
			i = len(registry)
		}
		return [3]int{1, i, 0}
	}
	// In catalogue order, which is the ladder's: 9, 10a, 10b, 11a, ….
	rank := func(i int) int { return i }
	last := 0
	for i := range cat {
		last = max(last, rank(i)+1)
	}
	i := slices.IndexFunc(cat, func(p pitfalls.Pitfall) bool { return p.Name == r.Pitfall })
	if i < 0 {
		return [3]int{0, last, 0}
	}
	j := slices.IndexFunc(cat[i].Cases(), func(c pitfalls.Case) bool {
		return c.Variant == r.Variant && c.Scenario == r.Scenario
	})
	if j < 0 {
		j = len(cat[i].Cases())
	}
	return [3]int{0, rank(i), j}
}

// loadRun reads the run in folder. It returns an error wrapping
// fs.ErrNotExist when the folder has no run.json, and the run together with
// an error when only its result.json could not be read.
func loadRun(folder string) (*Run, time.Time, error) {
	path := filepath.Join(folder, RunFile)
	info, err := os.Stat(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	if (r.Pitfall == "" || r.Variant == "") == (r.Lock == "") {
		return nil, time.Time{}, fmt.Errorf("%s: not a run: it names neither a pitfall and variant nor a lock", path)
	}
	// The folder may have moved since the run, with the whole report.
	r.ReportDir = folder
	if r.Lock != "" {
		r.LockEntry, _ = locks.Lookup(r.Lock) // an attendee's own lock has no entry
	}
	for _, p := range pitfalls.Catalogue() {
		if p.Name == r.Pitfall {
			r.Entry = p
			break
		}
	}
	if r.Skipped != "" {
		return &r, info.ModTime(), nil
	}
	resultPath := filepath.Join(folder, runner.ResultFile)
	b, err = os.ReadFile(resultPath)
	if errors.Is(err, fs.ErrNotExist) {
		return &r, info.ModTime(), nil
	}
	if err == nil {
		var res *runner.Result
		if res, err = resultOf(b); err == nil {
			r.Result = res
			return &r, info.ModTime(), nil
		}
		err = fmt.Errorf("%s: %w", resultPath, err)
	}
	return &r, info.ModTime(), err
}

// resultOf reads a run's result.json, also under the names its fields had
// before the words spoiled and missed (not_exercised, unmet), which report
// folders saved before them hold.
func resultOf(b []byte) (*runner.Result, error) {
	var v struct {
		runner.Result
		history.Renamed
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	v.Renamed.Into(&v.Spoiled, &v.Missed)
	return &v.Result, nil
}

// loadErrors are the folders LoadRuns could not read fully, in one line.
type loadErrors []error

func (e loadErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return "load runs: " + strings.Join(msgs, "; ")
}

func (e loadErrors) Unwrap() []error { return e }

// writeFileAtomic writes b to path through a temporary file in the same
// folder and a rename, so a reader sees the old file or the new one, never
// part of one.
func writeFileAtomic(path string, b []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(b); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
