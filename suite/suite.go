// Package suite runs a set of runs, one at a time or several at once
// (Options.Parallel), and keeps what each found. It exists so that the catalogue (check), one lock through every
// scenario of its topologies (check -lock, or a go test of an attendee's
// lock) and a run that explore found share one loop: run, skip a run that
// cannot start for want of a server, save, report progress, rebuild the
// index. Package reports only draws what this loop saves.
package suite

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// Options say where and how a suite runs.
type Options struct {
	// Out is the report folder: one folder per run and index.html. Made
	// when missing.
	Out      string
	Seed     int64           // seeds the clients' retry jitter; 0 means 1
	Duration time.Duration   // overrides each workload's length when > 0
	Progress io.Writer       // one line per run; nil for none
	Backend  cluster.Backend // where the servers run; nil means local processes
	// Parallel is how many runs are made at once; 0 or 1 means one at a
	// time. Each run has servers, ports and a folder of its own. A run
	// that the load of the others may have unsettled (reports.Run.Unsettled)
	// is made again alone, and says so.
	Parallel int
	// Watch, when set, is asked for a live view of each run as it starts
	// (label names the run as its progress line does), and the runs are
	// made one at a time whatever Parallel says, so that views do not
	// interleave. The view is told the run's operations; done is called
	// once the run has ended, before its progress line says how it went.
	Watch func(label string) (view history.Watcher, done func())
	// KeepGoing, when set, makes a run that fails midway (a server that
	// would not start or heal in time) a skipped run, with the error's
	// first line as its reason, and the suite goes on; unset, the first
	// error stops the suite.
	KeepGoing bool
	// ByKind chooses each lock run's reference by the kind of hold the
	// lock's own requests show (a lock program's: locks.ReferenceOfKind),
	// or Kind when set; runner.Options.ReferenceOf says how.
	ByKind bool
	Kind   footprint.Kind
	// Fresh starts every run's servers anew and stops them after it,
	// rather than reusing, reset, a deployment of an earlier run of the
	// suite whose faults struck no server (runner.Options.Pool).
	Fresh bool
	// Lease, when above 0, is the lease a lock's runs are timed against
	// (check -ttl): each scenario is stretched to it where it is longer
	// than the scenario's TTL (runner.Scenario.Stretch). At 0, Lock learns
	// it from the lock's own requests (a lock program's footprint) in its
	// first run, made alone, and times every later run against it.
	Lease time.Duration

	pool *cluster.Pool // the suite's warm deployments; nil when Fresh
}

// Catalogue runs every case of each pitfall in ps (its broken lock, its
// fixes and controls) in the scenario the case names, and compares each
// run with what the catalogue expects. Each run goes into its own folder,
// <id>-<name>-<variant>[-<scenario>]. A case whose scenario is unknown is
// refused before any run; running, skipping, saving and the index are as
// for Lock.
func Catalogue(ctx context.Context, ps []pitfalls.Pitfall, opts Options) ([]reports.Run, error) {
	var todo []job
	for _, p := range ps {
		for _, c := range p.Cases() {
			s, err := scenarios.Lookup(c.Scenario)
			if err != nil {
				return nil, err
			}
			lock, err := locks.Lookup(c.Lock)
			if err != nil {
				return nil, fmt.Errorf("pitfall %s: %w", p.Name, err)
			}
			folder := fmt.Sprintf("%s-%s-%s", p.ID, p.Name, c.Variant)
			if c.Scenario != p.Scenario {
				folder += "-" + c.Scenario
			}
			// A failing verdict sends the topology's reference lock (Run's
			// default) through the same scenario and seed, to tell own
			// failures from inherent ones.
			todo = append(todo, job{
				label: fmt.Sprintf("%s %s in %s", p.Name, c.Variant, c.Scenario), folder: folder,
				scenario: s, newLocker: lock.New, lock: p.Name + "/" + string(c.Variant),
				run: func(res *runner.Result) reports.Run { return reports.NewRun(p, c, res) },
				skipped: func(seed int64, dir, why string) reports.Run {
					return reports.SkippedRun(p, c, seed, dir, why)
				},
			})
		}
	}
	return runAll(ctx, todo, opts)
}

// Lock puts the lock newLocker builds, called name, through every scenario
// of each of topologies, in this order. Each run is judged against the
// reference lock of its scenario (locks.Reference), so every failing verdict
// gets a kind, and goes into its own folder, <name>-<scenario>. A name that
// cannot name a folder, no topology, or a duration too short for a
// scenario is refused before any run, and nothing is written.
//
// Runs are made Options.Parallel at a time; scenarios are timed against
// real clocks, so a run the others' load may have unsettled is made again
// alone. Each is saved in its folder as it ends, replacing what an earlier
// run of the same folder left there, and index.html is rebuilt at the end
// from every run folder in opts.Out. A run that cannot start for want of
// redis-server or MariaDB is skipped; any other error stops the suite and
// is returned with the runs made so far, which the index shows.
func Lock(ctx context.Context, name string, newLocker harness.NewLocker, topologies []cluster.Topology, opts Options) ([]reports.Run, error) {
	var todo []job
	for _, t := range topologies {
		if t == "" || !cluster.Known(t) {
			return nil, fmt.Errorf("matrix of %s: unknown topology %q", name, t)
		}
		for _, s := range scenarios.All() {
			if s.Topology != t {
				continue
			}
			j := lockJob(name, newLocker, s)
			if opts.ByKind || opts.Kind != footprint.Unknown {
				j.referenceOf = locks.ReferenceOfKind(s.Topology, s.Workload.Nested)
			}
			todo = append(todo, j)
		}
	}
	if err := fits(name, todo, opts); err != nil {
		return nil, fmt.Errorf("matrix of %s: %w", name, err)
	}
	if opts.Seed == 0 {
		opts.Seed = 1 // as runner.Run takes it, so that run.json says so
	}
	lease := &footprint.Lease{}
	if opts.Lease > 0 {
		lease = footprint.GivenLease(opts.Lease)
	} else {
		todo[0].first = true
	}
	for i := range todo {
		todo[i].lease = lease
	}
	return runAll(ctx, todo, opts)
}

// lockJob is the run of the lock newLocker builds, called name, through s
// into the folder <name>-<scenario>, judged against the reference lock of
// its scenario.
func lockJob(name string, newLocker harness.NewLocker, s runner.Scenario) job {
	j := job{label: fmt.Sprintf("%s in %s", name, s.Name), folder: name + "-" + s.Name,
		scenario: s, newLocker: newLocker, lock: name,
		run: func(res *runner.Result) reports.Run { return reports.LockRun(name, res) },
		skipped: func(seed int64, dir, why string) reports.Run {
			return reports.SkippedLockRun(name, s.Name, seed, dir, why)
		},
	}
	// The scenario's reference (a reentrant lock where it nests), unless
	// the lock names one of its own kind.
	ref := locks.Reference(s.Topology, s.Workload.Nested)
	if l, err := locks.Lookup(name); err == nil && l.Reference != "" {
		ref = l.ReferenceOn(s.Topology)
	}
	j.reference = ref.New
	// The lock is its own reference: a run of it that fails too shows a
	// failure inherent; one that stays ok proves nothing (runner).
	j.selfReference = ref.Name == name
	return j
}

// fits refuses, before any run, what would stop a lock's suite halfway: a
// name that cannot name a folder, no scenario to run, or a duration too
// short for a scenario's story.
func fits(name string, todo []job, opts Options) error {
	switch {
	case name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`):
		return fmt.Errorf("the lock's name %q cannot name a folder", name)
	case opts.Out == "":
		return errors.New("no report folder (Options.Out)")
	case len(todo) == 0:
		return errors.New("no topology given, so no scenario to run")
	case opts.Duration < 0:
		return fmt.Errorf("the duration must not be negative, got %s", opts.Duration)
	}
	for _, j := range todo {
		if opts.Duration > 0 && opts.Duration < j.scenario.MinDuration {
			return fmt.Errorf("duration %s is too short for scenario %s, whose story needs at least %s", opts.Duration, j.scenario.Name, j.scenario.MinDuration)
		}
	}
	return nil
}

// job is one run of a suite: a lock through a scenario into its folder,
// and how its result becomes a run of the report.
type job struct {
	label         string // "no-release broken in contention", for the progress line
	folder        string // under Options.Out
	scenario      runner.Scenario
	newLocker     harness.NewLocker
	lock          string // the lock's name in the history
	selfReference bool   // runner.Options.SelfReference
	seedOffset    int64  // added to Options.Seed: the runs of one pair differ by their seeds
	// reference is runner.Options.Reference: nil, the topology's.
	reference harness.NewLocker
	// referenceOf is runner.Options.ReferenceOf for a lock judged by the
	// kind of its hold (Options.ByKind).
	referenceOf func(footprint.Kind) harness.NewLocker
	run         func(res *runner.Result) reports.Run
	skipped     func(seed int64, dir, why string) reports.Run
	// lease is runner.Options.Lease: shared by a lock's runs.
	lease *footprint.Lease
	// first says the run is made alone before the others: the one that
	// learns the lease they are timed against.
	first bool
}

// runAll makes the runs of todo, opts.Parallel at a time, with a progress
// line each, and then rebuilds the index; see Lock.
func runAll(ctx context.Context, todo []job, opts Options) (_ []reports.Run, err error) {
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	var runs []reports.Run
	if !opts.Fresh {
		opts.pool = runner.NewPool()
		// Every server it kept stops before the suite returns.
		defer func() { err = errors.Join(err, opts.pool.Close()) }()
	}
	if opts.Parallel > 1 && opts.Watch == nil {
		runs, err = runParallel(ctx, todo, opts, progress)
	} else {
		runs, err = runInTurn(ctx, todo, opts, progress)
	}
	// The index shows what the folder holds even when a run failed; a
	// folder it cannot read is left out of it, not a reason to fail.
	all, loadErr := reports.LoadRuns(opts.Out)
	if all == nil && loadErr != nil {
		all = runs
	}
	return runs, errors.Join(err, reports.WriteIndex(opts.Out, all))
}

// runInTurn makes the runs of todo one after the other, each announced
// before it starts.
func runInTurn(ctx context.Context, todo []job, opts Options, progress io.Writer) ([]reports.Run, error) {
	var runs []reports.Run
	for i, j := range todo {
		if err := ctx.Err(); err != nil {
			return runs, err
		}
		fmt.Fprintf(progress, "[%d/%d] %s … ", i+1, len(todo), j.label)
		if opts.Watch != nil {
			fmt.Fprintln(progress) // the live view starts on a line of its own
		}
		r, err := runOne(ctx, j, opts)
		if err != nil {
			fmt.Fprintln(progress, "error")
			return runs, err
		}
		runs = append(runs, r)
		fmt.Fprint(progress, r.Outcome())
	}
	return runs, nil
}

// longestFirst is the order in which runParallel starts the runs of todo:
// the longest planned workload (its duration, or d when set, and its TTL)
// first, so that the few long runs (a Sentinel failover's) do not start
// last and keep one worker busy while the others idle; but the run that
// learns the lease the others are timed against (job.first) before all.
// Each run keeps its seed, so the order changes no verdict.
func longestFirst(todo []job, d time.Duration) []int {
	planned := func(j job) time.Duration {
		w := j.scenario.Workload
		if d > 0 {
			w.Duration = d
		}
		return w.Duration + w.TTL
	}
	order := make([]int, len(todo))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(planned(todo[b]), planned(todo[a])) })
	if i := slices.IndexFunc(order, func(i int) bool { return todo[i].first }); i > 0 {
		// Read before Delete moves it: Go does not say whether an
		// operand is read before or after a call beside it.
		first := order[i]
		order = append([]int{first}, slices.Delete(order, i, i+1)...)
	}
	return order
}

// runParallel makes the runs of todo opts.Parallel at a time, each line
// written when its run ends, then makes each unsettled one again alone.
// The runs come back in todo's order; the first error stops the suite.
func runParallel(ctx context.Context, todo []job, opts Options, progress io.Writer) ([]reports.Run, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runs := make([]reports.Run, len(todo))
	errs := make([]error, len(todo))
	var mu sync.Mutex // guards progress and done
	done := 0
	run := func(i int) {
		runs[i], errs[i] = runOne(ctx, todo[i], opts)
		if errs[i] != nil {
			cancel()
		}
		mu.Lock()
		done++
		outcome := "error\n"
		if errs[i] == nil {
			outcome = runs[i].Outcome()
		}
		fmt.Fprintf(progress, "[%d/%d] %s … %s", done, len(todo), todo[i].label, outcome)
		mu.Unlock()
	}
	order := longestFirst(todo, opts.Duration)
	if todo[order[0]].first {
		// The first run learns the lease the others are timed against:
		// they wait for it, rather than each learn it.
		run(order[0])
		order = order[1:]
	}
	queue := newSlots(todo, order, opts.Parallel)
	stop := context.AfterFunc(ctx, queue.close)
	defer stop()
	var wg sync.WaitGroup
	for range min(opts.Parallel, len(order)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ok := queue.take()
				if !ok {
					return
				}
				run(i)
				queue.done(i)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return madeOf(runs, errs), err
	}
	if err := ctx.Err(); err != nil {
		return madeOf(runs, errs), err
	}
	for i, r := range runs {
		if !r.Unsettled() {
			continue
		}
		fmt.Fprintf(progress, "[again alone] %s … ", todo[i].label)
		again, err := runOne(ctx, todo[i], opts)
		if err != nil {
			fmt.Fprintln(progress, "error")
			return runs, err
		}
		again.Alone, _, _ = strings.Cut(r.Outcome(), "\n")
		if err := reports.SaveRun(again); err != nil {
			return runs, err
		}
		runs[i] = again
		fmt.Fprint(progress, again.Outcome())
	}
	return runs, nil
}

// madeOf keeps, in order, the runs that were made without error.
func madeOf(runs []reports.Run, errs []error) []reports.Run {
	var made []reports.Run
	for i, r := range runs {
		if errs[i] == nil && r.Scenario != "" {
			made = append(made, r)
		}
	}
	return made
}

// runOne makes the run of j in its folder and saves it there.
func runOne(ctx context.Context, j job, opts Options) (reports.Run, error) {
	dir := filepath.Join(opts.Out, j.folder)
	if err := os.RemoveAll(dir); err != nil {
		return reports.Run{}, err
	}
	seed := opts.Seed + j.seedOffset
	ropts := runner.Options{
		Seed: seed, Dir: dir, Lock: j.lock, Duration: opts.Duration,
		Backend: opts.Backend, Reference: j.reference,
		ReferenceOf: j.referenceOf, Kind: opts.Kind, Pool: opts.pool, Lease: j.lease, SelfReference: j.selfReference,
	}
	if opts.Watch != nil {
		view, done := opts.Watch(j.label)
		ropts.Watch = view
		defer done()
	}
	res, err := runner.Run(ctx, j.scenario, j.newLocker, ropts)
	var r reports.Run
	if why, missing := missingComponent(err); missing {
		r = j.skipped(seed, dir, why)
	} else if err == nil {
		r = j.run(res)
	} else if opts.KeepGoing && ctx.Err() == nil {
		first, _, _ := strings.Cut(err.Error(), "\n")
		r = j.skipped(seed, dir, "the run failed: "+first)
	} else {
		return reports.Run{}, err
	}
	return r, reports.SaveRun(r)
}

// missingComponent says whether err means a run could not start because
// redis-server, MariaDB, PostgreSQL, etcd or ZooKeeper is missing (or the backend has
// none), and if so what is missing and how to install it.
func missingComponent(err error) (why string, missing bool) {
	if err == nil {
		return "", false
	}
	for _, sentinel := range []error{local.ErrNoRedisServer, local.ErrNoMariaDB, cluster.ErrNoPostgres, local.ErrNoEtcd, local.ErrNoZooKeeper} {
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

// Keep makes dir, a run's folder that runner.Run wrote for the lock named
// lock, a run the report shows: it saves the run's run.json and draws its
// run.html. `check explore` keeps each bug's run this way.
func Keep(dir, lock string) error {
	b, err := os.ReadFile(filepath.Join(dir, runner.ResultFile))
	if err != nil {
		return fmt.Errorf("keep run: %w", err)
	}
	var res runner.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("keep run: %s: %w", filepath.Join(dir, runner.ResultFile), err)
	}
	res.Dir = dir // the run was made in a scratch folder, then moved here
	r := reports.LockRun(lock, &res)
	if err := reports.SaveRun(r); err != nil {
		return err
	}
	return reports.WriteRunPages(filepath.Dir(dir), []reports.Run{r})
}
