package reports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/scenarios"
)

// MatrixOptions say where and how Matrix runs a lock.
type MatrixOptions struct {
	// Topologies are the deployments whose scenarios the lock goes
	// through, in this order; at least one.
	Topologies []cluster.Topology
	// Out is the report folder: one folder per run, <lock>-<scenario>,
	// and index.html. Made when missing.
	Out      string
	Seed     int64           // seeds the clients' retry jitter; 0 means 1
	Duration time.Duration   // overrides each workload's length when > 0
	Progress io.Writer       // one line per run; nil for none
	Backend  cluster.Backend // where the servers run; nil means local processes
}

// Matrix puts the lock newLocker builds, called name, through every scenario
// of each of opts.Topologies, one run at a time because scenarios are timed
// against real clocks. Each run is judged against the reference lock of its
// scenario (locks.Reference), so every failing verdict gets a kind, and is
// saved in its folder as it ends, replacing what an earlier run of the same
// lock and scenario left there; index.html is then rebuilt from every run
// folder in opts.Out. This is what `check -lock` does, and how a go test
// checks an attendee's own lock.
//
// A run that cannot start for want of redis-server or MariaDB is skipped.
// Any other error stops the matrix; it is returned with the runs made so
// far, which the index shows.
func Matrix(ctx context.Context, name string, newLocker harness.NewLocker, opts MatrixOptions) ([]Run, error) {
	var todo []harness.Scenario
	for _, t := range opts.Topologies {
		if t == "" || !cluster.Known(t) {
			return nil, fmt.Errorf("matrix of %s: unknown topology %q", name, t)
		}
		for _, s := range scenarios.All() {
			if s.Topology == t {
				todo = append(todo, s)
			}
		}
	}
	if err := matrixFits(name, todo, opts); err != nil {
		return nil, fmt.Errorf("matrix of %s: %w", name, err)
	}
	if opts.Seed == 0 {
		opts.Seed = 1 // as harness.Run takes it, so that run.json says so
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	var runs []Run
	var err error
	for i, s := range todo {
		if err = ctx.Err(); err != nil {
			break
		}
		fmt.Fprintf(progress, "[%d/%d] %s in %s … ", i+1, len(todo), name, s.Name)
		var r Run
		if r, err = matrixRun(ctx, name, newLocker, s, opts); err != nil {
			fmt.Fprintln(progress, "error")
			break
		}
		runs = append(runs, r)
		matrixProgress(progress, r)
	}
	// The index shows what the folder holds even when a run failed; a
	// folder it cannot read is left out of it, not a reason to fail.
	all, loadErr := LoadRuns(opts.Out)
	if all == nil && loadErr != nil {
		all = runs
	}
	return runs, errors.Join(err, WriteIndex(opts.Out, all))
}

// matrixFits refuses, before any run, what would stop the matrix halfway:
// a name that cannot name a folder, no scenario to run, or a duration too
// short for a scenario's story.
func matrixFits(name string, todo []harness.Scenario, opts MatrixOptions) error {
	switch {
	case name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`):
		return fmt.Errorf("the lock's name %q cannot name a folder", name)
	case opts.Out == "":
		return errors.New("no report folder (MatrixOptions.Out)")
	case len(todo) == 0:
		return errors.New("no topology given, so no scenario to run (MatrixOptions.Topologies)")
	case opts.Duration < 0:
		return fmt.Errorf("the duration must not be negative, got %s", opts.Duration)
	}
	for _, s := range todo {
		if opts.Duration > 0 && opts.Duration < s.MinDuration {
			return fmt.Errorf("duration %s is too short for scenario %s, whose story needs at least %s", opts.Duration, s.Name, s.MinDuration)
		}
	}
	return nil
}

// matrixRun runs the lock through scenario s into its folder and saves the
// run there.
func matrixRun(ctx context.Context, name string, newLocker harness.NewLocker, s harness.Scenario, opts MatrixOptions) (Run, error) {
	dir := filepath.Join(opts.Out, name+"-"+s.Name)
	if err := os.RemoveAll(dir); err != nil {
		return Run{}, err
	}
	o := harness.Options{Seed: opts.Seed, Dir: dir, Lock: name, Duration: opts.Duration, Backend: opts.Backend}
	if locks.Reference(s.Topology, s.Workload.Nested).Name == name {
		// The lock is its own reference: a run of it that stays ok only
		// raced differently, and proves nothing.
		o.ReferenceRuns = -1
	}
	res, err := harness.Run(ctx, s, newLocker, o)
	var r Run
	if why, missing := MissingComponent(err); missing {
		r = skippedLockRun(name, s.Name, opts.Seed, dir, why)
	} else if err == nil {
		r = LockRun(name, res)
	} else {
		return Run{}, err
	}
	return r, SaveRun(r)
}

// matrixProgress ends a lock run's progress line with how it turned out.
func matrixProgress(w io.Writer, r Run) {
	took := time.Duration(r.DurationMS * float64(time.Millisecond)).Round(time.Millisecond)
	var inherent []string
	for _, c := range check.Checkers {
		if r.Kinds[c] == check.Inherent {
			inherent = append(inherent, c+" "+string(r.Verdicts[c]))
		}
	}
	switch r.status() {
	case skipped:
		fmt.Fprintf(w, "skipped: %s\n", r.Skipped)
	case notExercised:
		fmt.Fprintf(w, "not exercised (%s)\n", took)
		for _, why := range r.NotExercised {
			fmt.Fprintf(w, "    not exercised: %s\n", why)
		}
	case ownFailure:
		fmt.Fprintf(w, "own failures: %s (%s)\n", strings.Join(r.ownFailures(), ", "), took)
	case undecided:
		fmt.Fprintf(w, "unknown verdicts: %s (%s)\n", strings.Join(r.unknowns(), ", "), took)
	case asExpected:
		if len(inherent) > 0 {
			fmt.Fprintf(w, "no own failures; inherent: %s (%s)\n", strings.Join(inherent, ", "), took)
			return
		}
		fmt.Fprintf(w, "no own failures (%s)\n", took)
	}
	for _, note := range r.unmetNotes() {
		fmt.Fprintf(w, "    %s\n", note)
	}
}

// MissingComponent says whether err means a run could not start because
// redis-server or MariaDB is missing, and if so what is missing and how to
// install it.
func MissingComponent(err error) (why string, missing bool) {
	if err == nil {
		return "", false
	}
	for _, sentinel := range []error{local.ErrNoRedisServer, local.ErrNoMariaDB} {
		if !errors.Is(err, sentinel) {
			continue
		}
		// The hint starts at the sentinel; what wraps it only names the run.
		msg := err.Error()
		if i := strings.Index(msg, sentinel.Error()); i >= 0 {
			msg = msg[i:]
		}
		return msg, true
	}
	return "", false
}
