// Package explore puts a lock through seeded random fault schedules, Jepsen
// style: run after run of a few seconds, each with faults drawn from every
// kind its topology supports, alone and combined, at random clients, phases
// and times. A run's seed draws its whole schedule, so any run can be
// replayed; a run the lock fails by its own fault (a verdict the reference
// lock does not share) is shrunk to the fewest drawn faults that still show
// it.
package explore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
)

// Config says what to explore and for how long.
type Config struct {
	Lock string // the lock's name, for the report
	New  harness.NewLocker
	// Reference is a correct lock of the same kind; a failing verdict it
	// shares under the same schedule is inherent, not the lock's own. Nil
	// leaves every failing verdict untold.
	Reference harness.NewLocker
	Topology  cluster.Topology // "" means single
	Nested    bool             // critical sections take the lock again
	// Runs and Time bound the exploration; at most one may be set, and
	// when neither is, it runs for DefaultTime.
	Runs int
	Time time.Duration
	Seed int64 // draws every run's seed; 0 means 1
	// Faults states the fault space, as NewSpace reads it: nil draws every
	// kind, {"-slow-work"} all but slow work, {"slow-work", "pause-holder"}
	// those two only. A replay draws its plan from the same space.
	Faults []string
	// Replay, when set, makes one run of that schedule instead of exploring.
	Replay *Replay
	// KeepGoing explores on after the first own violation; only the first
	// is shrunk and written.
	KeepGoing bool
	// Dir is where the first own run's folder goes (see FolderName); ""
	// writes none.
	Dir string
	// Progress gets a line per run, or one updating line when Terminal.
	Progress io.Writer
	Terminal bool
	Backend  cluster.Backend // nil means local processes

	space Space // Faults, read

	// run is harness.Run; tests replace it.
	run func(ctx context.Context, s harness.Scenario, newLocker harness.NewLocker, opts harness.Options) (*harness.Result, error)
}

// DefaultTime is how long Run explores when neither Runs nor Time is set.
const DefaultTime = 2 * time.Minute

// maxShrink bounds the reruns a shrink makes.
const maxShrink = 8

// maxErrors is how many runs in a row may fail to run before Run gives up.
const maxErrors = 3

// Report is what an exploration found. Its JSON form is what `check
// explore -json` prints.
type Report struct {
	Lock     string           `json:"lock"`
	Topology cluster.Topology `json:"topology"`
	Seed     int64            `json:"seed"`
	// Runs counts the schedules run; the reruns that confirm and shrink an
	// own violation are not counted.
	Runs int `json:"runs"`
	// Own counts runs with a failing verdict of the lock's own, which the
	// same schedule showed again when run once more.
	Own int `json:"own"`
	// Inherent counts runs whose failing verdicts the reference shared.
	Inherent int `json:"inherent"`
	// Untold counts runs with failing verdicts whose kind could not be told,
	// and no own one.
	Untold int `json:"untold"`
	// Unknown counts runs with no failing verdict and an unknown one: the
	// machine stalled, or the run did not happen as drawn.
	Unknown int `json:"unknown"`
	// Quiet counts runs that no drawn fault struck: the lock never reached
	// their failpoints. Their verdicts are counted above all the same.
	Quiet int `json:"quiet"`
	// Flaky counts runs with an own violation that the same schedule, run
	// once more, did not show: counted apart, not as own.
	Flaky int `json:"flaky"`
	// Errors counts runs that could not run at all.
	Errors int `json:"errors"`
	// FirstOwnS is when the first own violation was found, in seconds
	// since the start; null when none was.
	FirstOwnS *float64 `json:"first_own_s"`
	// Replay replays the first own violation, shrunk; "" when none.
	Replay    string `json:"replay"`
	ReportDir string `json:"report_dir"`
	First     *Found `json:"first_own,omitempty"`
}

// Found is the first own violation, after its shrink.
type Found struct {
	Seed    int64         `json:"seed"`    // the run's seed, before the shrink
	Drawn   int           `json:"drawn"`   // faults its schedule drew
	Kept    int           `json:"kept"`    // faults the smallest run that still shows it keeps
	Shrinks int           `json:"shrinks"` // reruns the shrink made
	Plan    string        `json:"plan"`    // the smallest schedule, in words
	Checks  []check.Check `json:"checks"`  // the smallest run's failing checks
}

// FolderName is the name of the folder Run writes the first own run into,
// under Config.Dir.
func FolderName(lock string, t cluster.Topology) string {
	return fmt.Sprintf("explore-%s-%s", lock, t)
}

// outcome is what one run found.
type outcome struct {
	res      *harness.Result
	own      []check.Check
	inherent []check.Check
	untold   []check.Check
	unknown  bool
	struck   bool   // a drawn fault struck
	dir      string // the run's folder, in the scratch folder
}

func (o outcome) failing() []check.Check {
	return slices.Concat(o.own, o.inherent, o.untold)
}

// summary is the outcome in a few words, for the progress line.
func (o outcome) summary() string {
	var parts []string
	for _, g := range []struct {
		name   string
		checks []check.Check
	}{{"own", o.own}, {"inherent", o.inherent}, {"untold", o.untold}} {
		for _, c := range g.checks {
			parts = append(parts, fmt.Sprintf("%s %s %s", g.name, c.Checker, c.Verdict))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "ok")
		if o.unknown {
			parts[0] = "unknown"
		}
	}
	if !o.struck {
		parts = append(parts, "(no drawn fault struck)")
	}
	return strings.Join(parts, ", ")
}

// Run explores cfg.Lock. It returns the report and, when the exploration
// stopped before its bound, why (ctx's error when cancelled).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	rep := &Report{Lock: cfg.Lock, Topology: cfg.Topology, Seed: cfg.Seed}
	base := cfg.Dir
	if base == "" {
		base = os.TempDir()
	} else if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	// Each run writes its folder here; the first own one is moved out.
	scratch, err := os.MkdirTemp(base, ".explore-*")
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	defer os.RemoveAll(scratch)
	e := &explorer{cfg: cfg, rep: rep, scratch: scratch, start: time.Now()}
	return rep, e.explore(ctx)
}

// fill checks cfg and fills its defaults.
func (cfg *Config) fill() error {
	switch {
	case cfg.New == nil:
		return errors.New("explore: no lock to explore")
	case cfg.Runs < 0 || cfg.Time < 0:
		return errors.New("explore: negative run count or time")
	case cfg.Runs > 0 && cfg.Time > 0:
		return errors.New("explore: give a run count or a time, not both")
	}
	if cfg.Topology == "" {
		cfg.Topology = cluster.Single
	}
	if !cluster.Known(cfg.Topology) {
		return fmt.Errorf("explore: unknown topology %q", cfg.Topology)
	}
	space, err := NewSpace(cfg.Faults)
	if err == nil {
		err = space.Check(cfg.Topology)
	}
	if err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	cfg.space = space
	if cfg.Runs == 0 && cfg.Time == 0 {
		cfg.Time = DefaultTime
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.Lock == "" {
		cfg.Lock = "lock"
	}
	if cfg.run == nil {
		cfg.run = harness.Run
	}
	return nil
}

// explorer is the state of one Run.
type explorer struct {
	cfg     Config
	rep     *Report
	scratch string
	start   time.Time
	made    int // run folders made in scratch
}

func (e *explorer) explore(ctx context.Context) error {
	defer e.progressEnd()
	if r := e.cfg.Replay; r != nil {
		plan, err := r.PlanIn(e.cfg.space, e.cfg.Topology, e.cfg.Nested)
		if err != nil {
			return err
		}
		if err := e.one(ctx, plan, false); !errors.Is(err, errStop) {
			return err
		}
		return nil
	}
	seeds := rand.New(rand.NewPCG(uint64(e.cfg.Seed), 0x5eed))
	for errorsInRow := 0; ; {
		if e.cfg.Runs > 0 && e.rep.Runs >= e.cfg.Runs {
			break
		}
		if e.cfg.Time > 0 && time.Since(e.start) >= e.cfg.Time {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// Seeds short enough to type, never 0.
		plan := e.cfg.space.Schedule(e.cfg.Topology, e.cfg.Nested, 1+seeds.Int64N(1<<31-1))
		err := e.one(ctx, plan, true)
		if errors.Is(err, errStop) {
			break
		}
		if err != nil && ctx.Err() == nil {
			if errorsInRow++; errorsInRow < maxErrors {
				continue
			}
			return fmt.Errorf("explore: %d runs in a row could not run, the last: %w", errorsInRow, err)
		}
		if err != nil {
			return err
		}
		errorsInRow = 0
	}
	return nil
}

// errStop says the exploration is done: an own violation was found and
// the config does not keep going.
var errStop = errors.New("stop")

// one makes one run of plan and counts it. An own violation is run once
// more to confirm it; the first confirmed one is shrunk (when shrink) and
// its folder kept.
func (e *explorer) one(ctx context.Context, plan Plan, shrink bool) error {
	o, err := e.try(ctx, plan)
	if err != nil {
		if ctx.Err() == nil {
			e.rep.Errors++
			e.progress(plan, "could not run: "+err.Error())
		}
		return err
	}
	e.rep.Runs++
	if len(o.own) > 0 {
		// An own violation the same schedule does not show again is not
		// counted as the lock's: a stall of the machine that delays a
		// watchdog past the lease looks like one, and the reference run
		// does not stall in the same place.
		again, err := e.try(ctx, plan)
		if err != nil && ctx.Err() != nil {
			os.RemoveAll(o.dir)
			return ctx.Err()
		}
		if err != nil || !showsOwn(again, checkers(o.own)) {
			e.rep.Flaky++
			e.progress(plan, o.summary()+"; not shown again by the same schedule")
			os.RemoveAll(o.dir)
			if err == nil {
				os.RemoveAll(again.dir)
			}
			return nil
		}
		os.RemoveAll(again.dir)
	}
	e.count(o)
	e.progress(plan, o.summary())
	if len(o.own) == 0 || e.rep.First != nil {
		os.RemoveAll(o.dir)
		return nil
	}
	at := time.Since(e.start).Seconds()
	e.rep.FirstOwnS = &at
	found := &Found{Seed: plan.Seed, Drawn: len(plan.Faults), Kept: len(plan.Kept())}
	if shrink {
		plan, o, found.Shrinks = e.shrink(ctx, plan, o)
		found.Kept = len(plan.Kept())
	}
	found.Plan, found.Checks = plan.String(), o.failing()
	e.rep.First, e.rep.Replay = found, plan.Replay().String()
	if err := e.keep(o); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !e.cfg.KeepGoing {
		return errStop
	}
	return nil
}

// keep moves the run's folder out of the scratch folder, replacing what an
// earlier exploration of the same lock left there.
func (e *explorer) keep(o outcome) error {
	if e.cfg.Dir == "" {
		return nil
	}
	dir := filepath.Join(e.cfg.Dir, FolderName(e.cfg.Lock, e.cfg.Topology))
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	if err := os.Rename(o.dir, dir); err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	e.rep.ReportDir = dir
	return nil
}

// count adds a run's outcome to the report.
func (e *explorer) count(o outcome) {
	switch {
	case len(o.own) > 0:
		e.rep.Own++
	case len(o.untold) > 0:
		e.rep.Untold++
	case len(o.inherent) > 0:
		e.rep.Inherent++
	case o.unknown:
		e.rep.Unknown++
	}
	if !o.struck {
		e.rep.Quiet++
	}
}

// try makes one run of plan in a new folder of the scratch folder.
func (e *explorer) try(ctx context.Context, plan Plan) (outcome, error) {
	e.made++
	dir := filepath.Join(e.scratch, fmt.Sprint(e.made))
	res, err := e.cfg.run(ctx, plan.Scenario(), e.cfg.New, harness.Options{
		Seed: plan.Seed, Dir: dir, Lock: e.cfg.Lock, Backend: e.cfg.Backend, Reference: e.cfg.Reference,
	})
	if err != nil && !(res != nil && errors.Is(err, harness.ErrNotExercised)) {
		os.RemoveAll(dir)
		return outcome{}, err
	}
	o := outcome{res: res, dir: dir, struck: struck(dir)}
	for _, c := range res.Checks {
		switch {
		case c.Verdict == check.Unknown:
			o.unknown = true
		case !check.Failing(c.Verdict):
		case c.Kind == check.Own:
			o.own = append(o.own, c)
		case c.Kind == check.Inherent:
			o.inherent = append(o.inherent, c)
		default:
			o.untold = append(o.untold, c)
		}
	}
	return o, nil
}

// struck reports whether the history in dir records a fault or a crash:
// whether any drawn fault happened. Without a history it says yes, the
// answer that hides nothing.
func struck(dir string) bool {
	ops, err := history.ReadFile(filepath.Join(dir, harness.HistoryFile))
	if err != nil {
		return true
	}
	return slices.ContainsFunc(ops, func(op history.Op) bool {
		return op.Kind == history.KindFault || op.Kind == history.KindCrash
	})
}

// shrink drops the drawn faults of plan one at a time, last first, and
// keeps each drop after which the run still shows an own violation of one
// of the same checkers. It makes at most maxShrink reruns and returns the
// smallest plan, its run, and how many reruns it made.
func (e *explorer) shrink(ctx context.Context, plan Plan, o outcome) (Plan, outcome, int) {
	want := checkers(o.own)
	keep := make([]int, len(plan.Faults))
	for i := range keep {
		keep[i] = i
	}
	reruns := 0
	for i := len(keep) - 1; i >= 0 && reruns < maxShrink && ctx.Err() == nil; i-- {
		fewer := slices.Delete(slices.Clone(keep), i, i+1)
		smaller, err := plan.Keeping(fewer)
		if err != nil {
			break // cannot happen: fewer are drawn indexes
		}
		reruns++
		got, err := e.try(ctx, smaller)
		if err != nil {
			e.progress(smaller, "shrink: could not run: "+err.Error())
			continue
		}
		e.progress(smaller, "shrink: "+got.summary())
		if !showsOwn(got, want) {
			os.RemoveAll(got.dir)
			continue
		}
		os.RemoveAll(o.dir)
		keep, plan, o = fewer, smaller, got
	}
	return plan, o, reruns
}

// checkers are the names of cs's checkers.
func checkers(cs []check.Check) map[string]bool {
	names := map[string]bool{}
	for _, c := range cs {
		names[c.Checker] = true
	}
	return names
}

// showsOwn reports whether o has an own violation of one of the checkers.
func showsOwn(o outcome, checkers map[string]bool) bool {
	return slices.ContainsFunc(o.own, func(c check.Check) bool { return checkers[c.Checker] })
}

// progress reports one run: a line each, or on a terminal one line
// rewritten in place.
func (e *explorer) progress(plan Plan, what string) {
	w := e.cfg.Progress
	if w == nil {
		return
	}
	if !e.cfg.Terminal {
		fmt.Fprintf(w, "run %d (replay %s): %s\n", e.rep.Runs, plan.Replay(), what)
		return
	}
	left := ""
	switch {
	case e.cfg.Time > 0:
		left = fmt.Sprintf(", %s left", max(e.cfg.Time-time.Since(e.start), 0).Round(time.Second))
	case e.cfg.Runs > 0:
		left = fmt.Sprintf(" of %d", e.cfg.Runs)
	}
	untold := ""
	if e.rep.Untold > 0 {
		untold = fmt.Sprintf(", untold %d", e.rep.Untold)
	}
	fmt.Fprintf(w, "\r\033[Kruns %d%s, own %d, inherent %d%s, unknown %d", e.rep.Runs, left, e.rep.Own, e.rep.Inherent, untold, e.rep.Unknown)
}

// progressEnd ends the updating line.
func (e *explorer) progressEnd() {
	if e.cfg.Progress != nil && e.cfg.Terminal {
		fmt.Fprintln(e.cfg.Progress)
	}
}
