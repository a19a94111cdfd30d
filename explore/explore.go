// Package explore puts a lock through seeded random fault schedules, Jepsen
// style: run after run of a few seconds, each with faults drawn from every
// kind its topology supports, alone and combined, at random clients, phases
// and times. A run's seed draws its whole schedule, so any run can be
// replayed. Runs the lock fails by its own fault (a verdict the reference
// lock does not share) are grouped into distinct bugs by a signature; each
// bug is shrunk to the fewest drawn faults that still show it.
package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore/schedule"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/runner"
)

// Config says what to explore and for how long.
type Config struct {
	Lock string // the lock's name, for the report
	// Command is the command line that explores this lock on this
	// topology and fault space, as a user pastes it: a bug's replay line
	// is Command, then -replay and the bug's replay (Report.ReplayLine).
	// "" leaves the lines to name the lock by Lock.
	Command string
	New     harness.NewLocker
	// Reference is a correct lock of the same kind; a failing verdict it
	// shares under the same schedule is inherent, not the lock's own. Nil
	// means the reference lock of the topology (runner.Options.Reference).
	Reference harness.NewLocker
	// ReferenceOf and Kind choose the reference by the kind of the lock's
	// hold, as runner.Options says: for a lock program, whose requests
	// show it.
	ReferenceOf func(footprint.Kind) harness.NewLocker
	Kind        footprint.Kind
	// SelfReference says the lock is the reference lock itself (redlock on
	// the redlock topology): comparing it with itself proves nothing, as a
	// reference run that stays ok only raced differently, so no reference
	// runs; its failures are own only by proof from the history.
	SelfReference bool
	Topology      cluster.Topology // "" means single
	Nested        bool             // critical sections take the lock again
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
	Replay *schedule.Replay
	// StopAtFirst ends the exploration at the first bug, once it is shrunk
	// and written, as CI wants; otherwise it runs until its time or runs
	// are spent.
	StopAtFirst bool
	// StopAfter, when above 0, ends the exploration once that many
	// distinct bugs are found (StopAtFirst is StopAfter 1).
	StopAfter int
	// StopWhen, when set, ends the exploration at the first new bug it
	// returns true for, as a test that looks for one bug among a lock's
	// others wants.
	StopWhen func(Bug) bool
	// Dir is where each bug's run folder goes (see FolderName, and
	// ReplayFolderName for a replay); "" writes none.
	Dir string
	// Progress gets a line per run, or one updating line when Terminal.
	Progress io.Writer
	Terminal bool
	Backend  cluster.Backend // nil means local processes
	// Parallel is how many runs are made at once, each with servers of its
	// own; 0 or 1 means one at a time. Run i draws the same schedule
	// whatever it is, and outcomes are judged in the order of the runs, so
	// bugs are numbered alike; a confirming rerun or a shrink is made while
	// the next runs go on.
	Parallel int
	// Shard, when its Count is above 1, makes this exploration one share
	// of a campaign split over Count processes with the same Seed: of the
	// plans one process would draw, it runs those numbered Index modulo
	// Count. Runs then counts the whole campaign's runs, not the shard's.
	Shard Shard
	// Fresh starts every run's servers anew and stops them after it,
	// rather than reusing a warm deployment of an earlier run, reset, when
	// that run's faults struck no server (runner.Options.Pool).
	Fresh bool

	// Lease, when above 0, is the lease the lock holds (check explore
	// -ttl): every schedule is timed against it where it is longer than
	// the schedule's TTL (runner.Scenario.Stretch). At 0, the first run
	// whose lock's own requests show a longer lease (a lock program's) is
	// made again timed against it, and so is every later run from its
	// start. The schedules are drawn as ever, and stretched as they run, so
	// that a replay draws what it drew.
	Lease time.Duration

	space schedule.Space   // Faults, read
	lease *footprint.Lease // Lease, or the one the runs learn

	// run is runner.Run; tests replace it.
	run func(ctx context.Context, s runner.Scenario, newLocker harness.NewLocker, opts runner.Options) (*runner.Result, error)
}

// DefaultTime is how long Run explores when neither Runs nor Time is set.
const DefaultTime = 2 * time.Minute

// endGrace is how long past its Time an exploration takes at most to end,
// on a machine not overloaded: to stop the runs under way, stop their
// servers and lock programs, and write the report.
const endGrace = 5 * time.Second

// CutShortOutcome is the outcome the runs file gives a run the end of the
// exploration stopped (RunRecord.Outcome): its verdicts are unknown, and
// it is counted in Report.CutShort only.
const CutShortOutcome = "cut short"

// maxShrink bounds the reruns a shrink makes.
const maxShrink = 8

// maxErrors is how many runs in a row may fail to run before Run gives up.
const maxErrors = 3

// lateTries is how many times in all a run is made while the machine, not
// the lock, leaves the verdict it needs unknown (checker.Check.Late):
// such a run says nothing of the lock, so a loaded machine would otherwise
// hide bugs an idle one finds.
const lateTries = 3

// Report is what an exploration found. Its JSON form is what `check
// explore -json` prints.
type Report struct {
	Lock string `json:"lock"`
	// Command explores the lock again on this topology and fault space
	// (Config.Command); "" when not known.
	Command  string           `json:"command,omitempty"`
	Topology cluster.Topology `json:"topology"`
	Seed     int64            `json:"seed"`
	// Faults is the fault space the schedules were drawn from, in words
	// ("every kind", "every kind but slow-work").
	Faults string `json:"faults"`
	// Runs counts the schedules run; the reruns that confirm and shrink an
	// own violation are not counted.
	Runs int `json:"runs"`
	// Own counts runs with a failing verdict of the lock's own: each either
	// matched a known bug or failed again when its schedule was rerun.
	Own int `json:"own"`
	// Inherent counts runs whose failing verdicts the reference shared.
	Inherent int `json:"inherent"`
	// Untold counts runs with failing verdicts whose kind could not be told,
	// and no own one. They are never a bug of the lock.
	Untold int `json:"untold"`
	// Unknown counts runs with no failing verdict and an unknown one: the
	// machine stalled, or the run did not happen as drawn.
	Unknown int `json:"unknown"`
	// Missed counts runs that no drawn fault struck: the lock never reached
	// their failpoints. Their verdicts are counted above all the same.
	// Reports written before the word was missed call it quiet
	// (UnmarshalJSON), as older shards do.
	Missed int `json:"missed"`
	// Flaky counts runs with an own violation that a rerun of the same
	// schedule did not show: counted apart, not as own.
	Flaky int `json:"flaky"`
	// Again counts runs made again because the machine ran the harness late
	// and left a verdict unknown: the run, or the rerun confirming a bug,
	// said nothing of the lock (at most lateTries times a run in all).
	Again int `json:"again"`
	// Errors counts runs that could not run at all.
	Errors int `json:"errors"`
	// CutShort counts runs under way when the exploration ended (its
	// Config.Time ran out, or it stopped at a bug or at its Runs): they
	// were stopped, so that the exploration ends on time (within endGrace
	// of it), and are counted in no outcome and not in Runs, never as ok;
	// the runs file lists each as CutShortOutcome. So is an own violation
	// whose confirming rerun was cut short (or made late again); a bug
	// whose shrink was cut short is reported as far as its shrink went
	// (Found.ShrinkCut).
	CutShort int `json:"cut_short"`
	// WallS is the exploration's wall time in seconds: every run, and every
	// rerun that confirmed or shrank a bug.
	WallS float64 `json:"wall_s"`
	// RunsPerMin is Runs per minute of WallS.
	RunsPerMin float64 `json:"runs_per_min"`
	// Started and Reused count the deployments the runs took: started
	// for a run, or warm, reset after an earlier run that struck no
	// server (Config.Fresh). Both are 0 for a Fresh exploration.
	Started int `json:"deployments_started,omitempty"`
	Reused  int `json:"deployments_reused,omitempty"`
	// Parallel is how many runs were made at once.
	Parallel int `json:"parallel"`
	// Shard is the share of the campaign this report covers ("1/4"); ""
	// when the exploration was not split. Shards is how many shard reports
	// a merged one was built from.
	Shard  string `json:"shard,omitempty"`
	Shards int    `json:"shards,omitempty"`
	// RunsFile lists every run with its number, seed and outcome, one JSON
	// object a line (RunRecord); "" when none was written.
	RunsFile string `json:"runs_file,omitempty"`
	// FirstOwnS is the seconds from the start until the run that showed the
	// first bug ended, not counting its confirming rerun or its shrink;
	// null when no bug was found.
	FirstOwnS *float64 `json:"first_own_s"`
	// Replay replays the first bug, shrunk; "" when none.
	Replay string `json:"replay"`
	// ReportDir is the first bug's run folder, or a replay's whatever it
	// showed; "" when none was written.
	ReportDir string `json:"report_dir"`
	First     *Found `json:"first_own,omitempty"`
	// Bugs are the distinct own failures found, first found first.
	Bugs []Bug `json:"bugs"`
	// Lease is the lease the schedules were timed against where it was
	// longer than theirs, given or learned ("the learned lease 1000 ms
	// (from SET … PX 1000)"); "" when none was given or learned.
	Lease string `json:"lease,omitempty"`
}

// UnmarshalJSON reads a Report also under the name Missed had before the
// word was missed, quiet, so that `check merge` reads older shards.
func (r *Report) UnmarshalJSON(b []byte) error {
	type fields Report // Report's fields, without this method
	var v struct {
		fields
		Quiet int `json:"quiet"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Report(v.fields)
	r.Missed += v.Quiet
	return nil
}

// Found is an own violation after its shrink.
type Found struct {
	Seed    int64           `json:"seed"`    // the run's seed, before the shrink
	Run     int             `json:"run"`     // the run's number in the exploration, from 0
	Drawn   int             `json:"drawn"`   // faults its schedule drew
	Kept    int             `json:"kept"`    // faults the smallest run that still shows it keeps
	Shrinks int             `json:"shrinks"` // reruns the shrink made
	Plan    string          `json:"plan"`    // the smallest schedule, in words
	Checks  []checker.Check `json:"checks"`  // the smallest run's failing checks
	// ShrinkCut says the end of the exploration cut the shrink short:
	// Plan is the smallest schedule it had seen fail alike by then, and
	// fewer faults may still show the bug.
	ShrinkCut bool `json:"shrink_cut_short,omitempty"`
}

// Bug is one distinct own failure of the lock: its signature names the
// checker and verdict, and each fault its shrunk schedule keeps, by kind
// and the phase it strikes.
type Bug struct {
	Signature string `json:"signature"`
	// FirstS is the seconds from the start until the first run that showed
	// it ended, not counting its confirming rerun or its shrink.
	FirstS float64 `json:"first_s"`
	// FirstRun is the number of the first run that showed it.
	FirstRun int `json:"first_run"`
	// Runs counts the runs that showed it, the first included.
	Runs      int    `json:"runs"`
	Replay    string `json:"replay"`     // replays it, shrunk
	ReportDir string `json:"report_dir"` // its run folder; "" when none was written
	Found

	failure failure
	// marks are the kept faults of each shrunk run of this bug; a run that
	// fails alike and drew all the faults of one of them is counted to it.
	marks [][]mark
}

// FolderName is the name of the folder of the n-th bug (from 1) Run finds,
// under Config.Dir.
func FolderName(lock string, t cluster.Topology, n int) string {
	return fmt.Sprintf("%s%d", folderPrefix(lock, t), n)
}

func folderPrefix(lock string, t cluster.Topology) string {
	return fmt.Sprintf("explore-%s-%s-", lock, t)
}

// outcome is what one run found.
type outcome struct {
	res      *runner.Result
	own      []checker.Check
	inherent []checker.Check
	untold   []checker.Check
	unknown  bool
	struck   bool // a drawn fault struck
	// fired says, per failpoint of the plan's scenario in its order,
	// whether it fired (history.End.Fired); nil when the history does not
	// say, and then every one counts as fired.
	fired []bool
	dir   string // the run's folder, in the scratch folder
}

// class is the outcome in one word, as the report counts it: own, untold,
// inherent, unknown or ok.
func (o outcome) class() string {
	switch {
	case len(o.own) > 0:
		return "own"
	case len(o.untold) > 0:
		return "untold"
	case len(o.inherent) > 0:
		return "inherent"
	case o.unknown:
		return "unknown"
	}
	return "ok"
}

func (o outcome) failing() []checker.Check {
	return slices.Concat(o.own, o.inherent, o.untold)
}

// fails reports whether o fails f's checker with f's verdict, whatever
// its kind.
func (o outcome) fails(f failure) bool {
	return slices.ContainsFunc(o.failing(), f.is)
}

// showsOwn reports whether o fails f's checker with f's verdict as the
// lock's own.
func (o outcome) showsOwn(f failure) bool {
	return slices.ContainsFunc(o.own, f.is)
}

// lateAt reports whether the machine left o's verdict of f's checker
// unknown (checker.Check.Late).
func (o outcome) lateAt(f failure) bool {
	return slices.ContainsFunc(o.res.Checks, func(c checker.Check) bool { return c.Checker == f.checker && c.Late() })
}

// summary is the outcome in a few words, for the progress line.
func (o outcome) summary() string {
	var parts []string
	for _, g := range []struct {
		name   string
		checks []checker.Check
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
		parts = append(parts, "(missed: no drawn fault struck)")
	}
	if len(o.untold) > 0 && o.untold[0].KindWhy != "" {
		// What could not be decided, so that an untold run teaches something.
		parts = append(parts, "(untold: "+o.untold[0].KindWhy+")")
	}
	return strings.Join(parts, ", ")
}

// failure is what a bug fails: a checker, with a verdict.
type failure struct {
	checker string
	verdict checker.Verdict
}

func (f failure) String() string { return f.checker + " " + string(f.verdict) }

func (f failure) is(c checker.Check) bool { return c.Checker == f.checker && c.Verdict == f.verdict }

// checkerOrder ranks the checkers that name a run's failure. Mutual
// exclusion comes first: once holders overlapped, whether the resource also
// lost an update is luck of the interleaving, and the bug is the same.
var checkerOrder = []string{checker.CheckLock, checker.CheckResource, checker.CheckLiveness, checker.CheckHandover}

// failureOf names a run by the first of its own checks in checkerOrder;
// checkers not in it come last, by name.
func failureOf(own []checker.Check) failure {
	rank := func(c checker.Check) int {
		if i := slices.Index(checkerOrder, c.Checker); i >= 0 {
			return i
		}
		return len(checkerOrder)
	}
	best := own[0]
	for _, c := range own[1:] {
		if r, b := rank(c), rank(best); r < b || r == b && c.Checker < best.Checker {
			best = c
		}
	}
	return failure{checker: best.Checker, verdict: best.Verdict}
}

// mark is one drawn fault as a signature names it: its kind, and where in
// the lock's life it strikes, in words. A scheduled fault, or a story that
// strikes at several points (a failover), has no strike: its kind says it.
type mark struct {
	kind   string
	strike string
}

func (m mark) String() string {
	w := schedule.Words(m.kind)
	if m.strike == "" {
		return w
	}
	return w + " " + m.strike
}

// marksOf marks each of faults that struck. A fault whose story adds other
// faults to slow work (a renewal cut while the work outlives the lease) is
// marked twice, the slow work apart: a lock that fails under the slow work
// alone (it never renews) then shows one bug, whichever of the two found
// it. fired says, per failpoint of the faults in their order, whether it
// fired (nil: all did); a fault none of whose failpoints fired is not
// marked, since it did nothing to the lock, and neither is slow work that
// never came. A fault with no failpoint (one at a drawn time) struck
// when the run went as written.
func marksOf(faults []schedule.Fault, fired []bool) []mark {
	var ms []mark
	next := 0 // the index in fired of the fault's first failpoint
	for _, f := range faults {
		hit := func(i int) bool { return fired == nil || next+i >= len(fired) || fired[next+i] }
		m := mark{kind: f.Kind}
		fps := slices.Clone(f.Failpoints)
		hits := make([]bool, len(fps))
		for i := range fps {
			hits[i] = hit(i)
		}
		next += len(fps)
		if i := slices.IndexFunc(fps, slowSection); i >= 0 && len(fps)+len(f.Scheduled) > 1 {
			if hits[i] {
				ms = append(ms, mark{kind: "slow-work", strike: strikeWords(fps[i].Name, fps[i].Action.Kind)})
			}
			fps, hits = slices.Delete(fps, i, i+1), slices.Delete(hits, i, i+1)
		}
		if len(fps) > 0 && !slices.Contains(hits, true) && len(f.Scheduled) == 0 {
			continue
		}
		if len(fps) > 0 && !slices.ContainsFunc(fps, func(o failpoint.Point) bool { return o.Name != fps[0].Name }) {
			m.strike = strikeWords(fps[0].Name, fps[0].Action.Kind)
		}
		ms = append(ms, m)
	}
	return ms
}

// slowSection reports whether fp makes a critical section slow for a set time.
func slowSection(fp failpoint.Point) bool {
	return fp.Name == failpoint.CriticalSection && fp.Action.Kind == failpoint.ActionSleep && fp.Action.Until == ""
}

// strikeWords is where the failpoint name strikes, in words. A lost reply
// belongs to its command, whichever side of it the failpoint was armed:
// the command runs and its reply is dropped either way.
func strikeWords(name string, a failpoint.ActionKind) string {
	switch {
	case name == failpoint.CriticalSection:
		return "in critical section"
	case name == failpoint.BeforeAcquire:
		return "before acquire"
	case name == failpoint.Acquired:
		return "once acquired"
	case a == failpoint.ActionDrop && name == failpoint.AfterTook:
		return "of the acquire command that took the key"
	case a == failpoint.ActionDrop && strings.HasPrefix(name, "before "):
		return "of " + strings.TrimPrefix(name, "before ")
	case a == failpoint.ActionDrop && strings.HasPrefix(name, "after "):
		return "of " + strings.TrimPrefix(name, "after ")
	case name == failpoint.AfterTook || strings.HasPrefix(name, "before ") || strings.HasPrefix(name, "after "):
		return name // a command failpoint reads as words already
	}
	return "at " + name
}

// signature names a bug: what it fails, and the faults that show it.
func signature(f failure, marks []mark) string {
	parts := make([]string, len(marks))
	for i, m := range marks {
		parts[i] = m.String()
	}
	slices.Sort(parts)
	parts = slices.Compact(parts)
	if len(parts) == 0 {
		parts = []string{"no fault"}
	}
	return f.String() + " · " + strings.Join(parts, " + ")
}

// Run explores cfg.Lock. It returns the report and, when the exploration
// stopped before its bound, why (ctx's error when cancelled).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	rep := &Report{Lock: cfg.Lock, Command: cfg.Command, Topology: cfg.Topology, Seed: cfg.Seed, Faults: cfg.space.String(), Bugs: []Bug{}, Parallel: max(cfg.Parallel, 1)}
	if cfg.Shard.split() {
		rep.Shard = cfg.Shard.String()
	}
	base := cfg.Dir
	if base == "" {
		base = os.TempDir()
	} else if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	if cfg.Dir != "" && cfg.Replay == nil {
		if err := clearFolders(cfg.Dir, cfg.Lock, cfg.Topology); err != nil {
			return nil, err
		}
	}
	// Each run writes its folder here; each bug's is moved out.
	scratch, err := os.MkdirTemp(base, ".explore-*")
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	defer os.RemoveAll(scratch)
	e := &explorer{cfg: cfg, rep: rep, scratch: scratch, start: start}
	if err := e.openRuns(); err != nil {
		return nil, err
	}
	if !cfg.Fresh {
		// Closed before Run returns, whatever ends the runs (Ctrl-C too):
		// it stops every server it kept.
		e.pool = runner.NewPool()
	}
	err = e.explore(ctx)
	if e.pool != nil {
		err = errors.Join(err, e.pool.Close())
		st := e.pool.Stats()
		rep.Started, rep.Reused = st.Started, st.Reused
	}
	rep.Lease = cfg.lease.String()
	rep.WallS = time.Since(start).Seconds()
	if rep.WallS > 0 {
		rep.RunsPerMin = float64(rep.Runs) / rep.WallS * 60
	}
	return rep, errors.Join(err, e.closeRuns())
}

// clearFolders removes the bug folders an earlier exploration of the same
// lock and topology left in dir, so that dir shows this one's bugs only.
func clearFolders(dir, lock string, t cluster.Topology) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	prefix := folderPrefix(lock, t)
	for _, entry := range entries {
		n, found := strings.CutPrefix(entry.Name(), prefix)
		if !found || n == "" || strings.Trim(n, "0123456789") != "" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, entry.Name())); err != nil {
			return fmt.Errorf("explore: %w", err)
		}
	}
	return nil
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
	case cfg.Shard != Shard{} && cfg.Shard.check() != nil:
		return fmt.Errorf("explore: %w", cfg.Shard.check())
	case cfg.Shard.split() && cfg.Replay != nil:
		return errors.New("explore: a replay makes one run: it is not sharded")
	}
	if cfg.Topology == "" {
		cfg.Topology = cluster.Single
	}
	if !cluster.Known(cfg.Topology) {
		return fmt.Errorf("explore: unknown topology %q", cfg.Topology)
	}
	space, err := schedule.NewSpace(cfg.Faults)
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
		cfg.run = runner.Run
	}
	switch {
	case cfg.Lease < 0:
		return errors.New("explore: negative lease")
	case cfg.Lease > 0:
		cfg.lease = footprint.GivenLease(cfg.Lease)
	default:
		cfg.lease = &footprint.Lease{}
	}
	return nil
}

// explorer is the state of one Run.
type explorer struct {
	cfg     Config
	rep     *Report
	scratch string
	start   time.Time
	made    atomic.Int64  // run folders made in scratch
	runs    *os.File      // the runs file; nil when none is written
	runsErr error         // the first error writing it
	pool    *cluster.Pool // warm deployments, shared by every run; nil when Fresh
}

func (e *explorer) explore(ctx context.Context) error {
	defer e.progressEnd()
	if e.cfg.Time > 0 && e.cfg.Replay == nil {
		// The time's end stops the runs under way, so that the
		// exploration ends on time; the end of ctx itself (Ctrl-C) is
		// still an error.
		budget, cancel := context.WithDeadline(ctx, e.start.Add(e.cfg.Time))
		defer cancel()
		err := e.exploreWithin(budget)
		if err != nil && ctx.Err() == nil && budget.Err() != nil {
			return nil // the time ran out, as it was meant to
		}
		return err
	}
	return e.exploreWithin(ctx)
}

// exploreWithin explores until ctx ends or the runs are spent.
func (e *explorer) exploreWithin(ctx context.Context) error {
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
	draw := e.drawer()
	if e.cfg.Parallel > 1 {
		return e.exploreParallel(ctx, draw)
	}
	errorsInRow := 0
	for !e.spent() {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := e.one(ctx, draw(), true)
		if done, err := e.after(ctx, err, &errorsInRow); done {
			return err
		}
	}
	return nil
}

// drawer returns the exploration's plans in turn: plan i is drawn from the
// i-th seed the exploration's seed draws. A shard skips the others' plans,
// drawing only their seeds, so its plan i is the one process's plan i.
func (e *explorer) drawer() func() schedule.Plan {
	seeds := rand.New(rand.NewPCG(uint64(e.cfg.Seed), 0x5eed))
	i := -1
	return func() schedule.Plan {
		for {
			i++
			// Seeds short enough to type, never 0.
			seed := 1 + seeds.Int64N(1<<31-1)
			if e.cfg.Shard.has(i) {
				p := e.cfg.space.Draw(e.cfg.Topology, e.cfg.Nested, seed)
				p.Run = i
				return p
			}
		}
	}
}

// timeUp reports whether the exploration's Time ran out.
func (e *explorer) timeUp() bool {
	return e.cfg.Time > 0 && time.Since(e.start) >= e.cfg.Time
}

// spent reports whether the exploration's runs or time are spent.
func (e *explorer) spent() bool {
	return e.cfg.Runs > 0 && e.rep.Runs >= e.cfg.Shard.share(e.cfg.Runs) || e.timeUp()
}

// after says, from what judging a run returned, whether the exploration
// is done, and with what error: a bug that stops it, ctx's end, or too
// many runs in a row that could not run.
func (e *explorer) after(ctx context.Context, err error, errorsInRow *int) (done bool, _ error) {
	switch {
	case errors.Is(err, errStop):
		return true, nil
	case err != nil && ctx.Err() == nil:
		if *errorsInRow++; *errorsInRow < maxErrors {
			return false, nil
		}
		return true, fmt.Errorf("explore: %d runs in a row could not run, the last: %w", *errorsInRow, err)
	case err != nil:
		return true, err
	}
	*errorsInRow = 0
	return false, nil
}

// tried is the first run of the i-th plan, as a worker made it.
type tried struct {
	i    int
	plan schedule.Plan
	o    outcome
	err  error
	// never says the run was not made: the exploration was done before a
	// worker took it. It is no run of the exploration, not even cut short.
	never bool
}

// exploreParallel makes the first run of each drawn plan Parallel at a
// time and judges them in the order they were drawn, so that run i is
// plan i and the report reads as one made in turn would. When the time
// runs out, the runs under way are stopped, and each is judged in its turn
// as ever: one that ended first counts, one the end stopped is cut short
// (and so is a bug's confirming rerun). When it stops at a bug or at its
// Runs, the runs not yet judged are dropped.
func (e *explorer) exploreParallel(ctx context.Context, draw func() schedule.Plan) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type drawn struct {
		i    int
		plan schedule.Plan
	}
	plans, results := make(chan drawn), make(chan tried)
	go func() {
		defer close(plans)
		// Time bounds the drawing; Runs is counted as runs are judged.
		for i := 0; e.cfg.Time == 0 || time.Since(e.start) < e.cfg.Time; i++ {
			select {
			case plans <- drawn{i, draw()}:
			case <-runCtx.Done():
				return
			}
		}
	}()
	// A lock whose lease may be learned (a program's) learns it in its
	// first run, made alone: each run beside it would learn it too, and
	// be made again stretched, at twice the cost.
	first := make(chan struct{})
	learned := sync.OnceFunc(func() { close(first) })
	if e.cfg.Lease != 0 || e.cfg.ReferenceOf == nil {
		learned()
	}
	var workers sync.WaitGroup
	for w := range e.cfg.Parallel {
		workers.Go(func() {
			if w > 0 {
				select {
				case <-first:
				case <-runCtx.Done():
				}
			}
			for d := range plans {
				if runCtx.Err() != nil {
					results <- tried{i: d.i, plan: d.plan, never: true}
					continue
				}
				o, err := e.try(runCtx, d.plan, true)
				learned()
				results <- tried{i: d.i, plan: d.plan, o: o, err: err}
			}
		})
	}
	go func() {
		workers.Wait()
		close(results)
	}()
	pending, next, errorsInRow := map[int]tried{}, 0, 0
	var done, draining bool
	var err error
	for t := range results {
		if done && !draining {
			e.dropped(t) // made after the end, or cut short by it
			continue
		}
		pending[t.i] = t
		for !done || draining {
			t, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if t.never {
				continue // ctx ended (Ctrl-C, or the time) before it began
			}
			judged := e.judge(ctx, t.plan, t.o, t.err, true)
			if draining {
				continue // ctx is done: judge made no rerun
			}
			if done, err = e.after(ctx, judged, &errorsInRow); !done && e.spent() {
				done = true
			}
			if done {
				cancel()
				draining = !errors.Is(judged, errStop) && e.timeUp()
			}
		}
		if done && !draining {
			for _, t := range pending {
				e.dropped(t)
			}
			clear(pending)
		}
	}
	if err == nil && !done {
		err = ctx.Err()
	}
	return err
}

// dropped drops a run the exploration does not judge, since it ended
// first (its time ran out, or it stopped at a bug): its folder goes, and it
// counts as cut short, in no outcome. A run past Runs, drawn ahead while
// the last ones were judged, was never one of the exploration's: it goes
// uncounted, so that the runs file lists the same runs at any Parallel.
func (e *explorer) dropped(t tried) {
	if t.err == nil && !t.never {
		os.RemoveAll(t.o.dir)
	}
	if t.never || e.cfg.Runs > 0 && t.plan.Run >= e.cfg.Runs {
		return
	}
	e.cutShort(t.plan)
}

// cutShort counts plan's run as cut short by the end of the exploration,
// and lists it so: never ok, since what it would have shown is unknown.
func (e *explorer) cutShort(plan schedule.Plan) {
	e.rep.CutShort++
	e.progress(plan, "cut short: under way at the end, stopped; not counted")
	e.record(RunRecord{Run: plan.Run, Seed: plan.Seed, Replay: plan.Replay().String(), Outcome: CutShortOutcome})
}

// errStop says the exploration is done: a bug was found and the config
// stops at the first.
var errStop = errors.New("stop")

// one makes one run of plan and counts it. A run that fails as a known bug
// does, under faults that include the bug's, is counted to it with no
// rerun. Any other own violation is run once more to confirm it, then
// shrunk (when shrink) and named by its signature: a bug already known by
// that name counts it, a new one keeps its folder.
func (e *explorer) one(ctx context.Context, plan schedule.Plan, shrink bool) error {
	o, err := e.try(ctx, plan, true)
	return e.judge(ctx, plan, o, err, shrink)
}

// judge counts the first run of plan, made with o or err, and goes on as
// one says.
func (e *explorer) judge(ctx context.Context, plan schedule.Plan, o outcome, err error, shrink bool) error {
	o, err = e.tryWhileLate(ctx, plan, true, o, err, func(o outcome) bool { return len(o.own) == 0 && o.res.Late() != nil })
	if err != nil {
		if ctx.Err() == nil {
			e.rep.Errors++
			e.progress(plan, "could not run: "+err.Error())
			e.record(RunRecord{Run: plan.Run, Seed: plan.Seed, Replay: plan.Replay().String(), Outcome: "error", Error: err.Error()})
		} else {
			e.cutShort(plan)
		}
		return err
	}
	e.rep.Runs++
	ended := time.Since(e.start).Seconds()
	if len(o.own) == 0 {
		e.count(o)
		e.progress(plan, o.summary())
		e.record(recordOf(plan, o, ""))
		return e.discard(o)
	}
	f := failureOf(o.own)
	if n := e.knownBug(f, marksOf(plan.Kept(), o.fired)); n > 0 {
		e.rep.Bugs[n-1].Runs++
		e.count(o)
		e.progress(plan, fmt.Sprintf("%s: bug %d again", o.summary(), n))
		e.record(recordOf(plan, o, e.rep.Bugs[n-1].Signature))
		return e.discard(o)
	}
	// An own violation the same schedule does not show again is not
	// counted as the lock's: a stall of the machine that delays a watchdog
	// past the lease looks like one, and the reference run does not stall
	// in the same place. The first run's kind stands, so the rerun needs
	// no reference: the same checker failing alike confirms it.
	again, err := e.try(ctx, plan, false)
	again, err = e.tryWhileLate(ctx, plan, false, again, err, func(o outcome) bool { return o.lateAt(f) })
	if err != nil && ctx.Err() != nil {
		// Its confirming rerun was cut short: neither a bug nor flaky.
		e.rep.Runs--
		e.cutShort(plan)
		os.RemoveAll(o.dir)
		return ctx.Err()
	}
	if err == nil {
		os.RemoveAll(again.dir)
	}
	if err != nil || !again.fails(f) {
		e.rep.Flaky++
		e.progress(plan, o.summary()+"; not shown again by the same schedule")
		r := recordOf(plan, o, "")
		r.Outcome = "flaky"
		e.record(r)
		return e.discard(o)
	}
	e.count(o)
	e.progress(plan, o.summary())
	rec := recordOf(plan, o, "") // its bug is named once shrunk
	found := Found{Seed: plan.Seed, Run: plan.Run, Drawn: len(plan.Faults), Kept: len(plan.Kept())}
	if shrink {
		plan, o, found.Shrinks, found.ShrinkCut = e.shrink(ctx, plan, o, f)
		found.Kept = len(plan.Kept())
	}
	found.Plan, found.Checks = plan.String(), o.failing()
	marks := marksOf(plan.Kept(), o.fired)
	sig := signature(f, marks)
	rec.Bug = sig
	e.record(rec)
	return e.file(ctx, plan, o, bugOf{f: f, sig: sig, marks: marks, found: found, ended: ended})
}

// tryWhileLate makes plan's run again, as try does, while late says the
// machine left the run o (made with err) saying nothing of the lock, up to
// lateTries runs in all; each rerun counts in the report's Again.
func (e *explorer) tryWhileLate(ctx context.Context, plan schedule.Plan, reference bool, o outcome, err error, late func(outcome) bool) (outcome, error) {
	for tries := 1; err == nil && tries < lateTries && late(o); tries++ {
		e.rep.Again++
		e.progress(plan, o.summary()+"; late (the machine ran late): made again")
		os.RemoveAll(o.dir)
		o, err = e.try(ctx, plan, reference)
	}
	return o, err
}

// bugOf is what a confirmed own failure tells of its bug.
type bugOf struct {
	f     failure
	sig   string
	marks []mark
	found Found
	ended float64 // seconds into the exploration
}

// file counts a confirmed own failure, shrunk to plan and o, to its bug:
// a known one, one that needed more faults, or a new one.
func (e *explorer) file(ctx context.Context, plan schedule.Plan, o outcome, n bugOf) error {
	f, sig, marks, found, ended := n.f, n.sig, n.marks, n.found, n.ended
	var err error
	if i := slices.IndexFunc(e.rep.Bugs, func(b Bug) bool { return b.Signature == sig }); i >= 0 {
		// Drawn among other faults, a known bug can look new until the
		// shrink drops them.
		b := &e.rep.Bugs[i]
		b.Runs++
		b.marks = append(b.marks, marks)
		e.progress(plan, fmt.Sprintf("shrunk: bug %d again: %s", i+1, sig))
		os.RemoveAll(o.dir)
		return ctx.Err()
	}
	if i := slices.IndexFunc(e.rep.Bugs, func(b Bug) bool { return b.failure == f && b.needsMore(marks) }); i >= 0 {
		// A known bug whose faults include all of these and more is this
		// bug, first seen with a fault it does not need: it takes the
		// fewer faults, their signature, replay and run folder.
		b := &e.rep.Bugs[i]
		b.Signature, b.Replay, b.Found, b.Runs = sig, plan.Replay().String(), found, b.Runs+1
		b.marks = append(b.marks, marks)
		if b.ReportDir, err = e.keep(o, i+1); err != nil {
			return err
		}
		if i == 0 {
			first := b.Found
			e.rep.First, e.rep.Replay, e.rep.ReportDir = &first, b.Replay, b.ReportDir
		}
		e.progress(plan, fmt.Sprintf("shrunk: bug %d, with fewer faults: %s", i+1, sig))
		return ctx.Err()
	}
	b := Bug{Signature: sig, FirstS: ended, FirstRun: plan.Run, Runs: 1, Replay: plan.Replay().String(), Found: found, failure: f, marks: [][]mark{marks}}
	if b.ReportDir, err = e.keep(o, len(e.rep.Bugs)+1); err != nil {
		return err
	}
	e.rep.Bugs = append(e.rep.Bugs, b)
	if len(e.rep.Bugs) == 1 {
		first := b.Found
		e.rep.First, e.rep.FirstOwnS, e.rep.Replay, e.rep.ReportDir = &first, &b.FirstS, b.Replay, b.ReportDir
	}
	e.progress(plan, fmt.Sprintf("bug %d: %s", len(e.rep.Bugs), sig))
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.cfg.StopAtFirst || e.cfg.StopAfter > 0 && len(e.rep.Bugs) >= e.cfg.StopAfter || e.cfg.StopWhen != nil && e.cfg.StopWhen(b) {
		return errStop
	}
	return nil
}

// knownBug is the number (from 1) of the bug a run that fails f under
// drawn faults is counted to without a rerun: a bug that fails alike and
// whose kept faults are all among the drawn ones; the one that keeps the
// most faults when several are. 0 when none is.
func (e *explorer) knownBug(f failure, drawn []mark) int {
	best, most := 0, -1
	for i, b := range e.rep.Bugs {
		if b.failure != f {
			continue
		}
		for _, kept := range b.marks {
			if len(kept) > most && allIn(kept, drawn) {
				best, most = i+1, len(kept)
			}
		}
	}
	return best
}

// needsMore reports whether every shrunk run of b kept all of marks and
// more: marks alone explain it.
func (b Bug) needsMore(marks []mark) bool {
	for _, kept := range b.marks {
		if len(kept) <= len(marks) || !allIn(marks, kept) {
			return false
		}
	}
	return len(b.marks) > 0
}

// allIn reports whether every mark of want is in have.
func allIn(want, have []mark) bool {
	for _, m := range want {
		if !slices.Contains(have, m) {
			return false
		}
	}
	return true
}

// ReplayFolderName is the name of the folder, under Config.Dir, a replay's
// run goes to when it shows a bug: apart from the exploration's bugs.
func ReplayFolderName(lock string, t cluster.Topology) string {
	return folderPrefix(lock, t) + "replay"
}

// keep moves the run's folder out of the scratch folder, as the n-th bug's
// (or the replay's), replacing what an earlier exploration left there. It
// returns the folder, "" when the config writes none.
func (e *explorer) keep(o outcome, n int) (string, error) {
	if e.cfg.Dir == "" {
		return "", nil
	}
	name := FolderName(e.cfg.Lock, e.cfg.Topology, n)
	if e.cfg.Replay != nil {
		name = ReplayFolderName(e.cfg.Lock, e.cfg.Topology)
	}
	dir := filepath.Join(e.cfg.Dir, name)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("explore: %w", err)
	}
	if err := os.Rename(o.dir, dir); err != nil {
		return "", fmt.Errorf("explore: %w", err)
	}
	return dir, nil
}

// discard removes the folder of a run that showed no new bug; a replay's
// run is kept, as the replay's folder, whatever it showed, so that the user
// who asked for it can read it (Report.ReportDir).
func (e *explorer) discard(o outcome) error {
	if e.cfg.Replay == nil || e.cfg.Dir == "" {
		os.RemoveAll(o.dir)
		return nil
	}
	dir, err := e.keep(o, 0)
	e.rep.ReportDir = dir
	return err
}

// count adds a run's outcome to the report.
func (e *explorer) count(o outcome) {
	switch o.class() {
	case "own":
		e.rep.Own++
	case "untold":
		e.rep.Untold++
	case "inherent":
		e.rep.Inherent++
	case "unknown":
		e.rep.Unknown++
	}
	if !o.struck {
		e.rep.Missed++
	}
}

// try makes one run of plan in a new folder of the scratch folder; without
// reference, no reference run tells the kind of its failing verdicts.
func (e *explorer) try(ctx context.Context, plan schedule.Plan, reference bool) (outcome, error) {
	dir := filepath.Join(e.scratch, fmt.Sprint(e.made.Add(1)))
	opts := runner.Options{Seed: plan.Seed, Dir: dir, Lock: e.cfg.Lock, Backend: e.cfg.Backend, Reference: e.cfg.Reference,
		ReferenceOf: e.cfg.ReferenceOf, Kind: e.cfg.Kind, Pool: e.pool, Lease: e.cfg.lease}
	if !reference || e.cfg.SelfReference {
		opts.ReferenceRuns = -1
	}
	res, err := e.cfg.run(ctx, plan.Scenario(), e.cfg.New, opts)
	if err != nil {
		os.RemoveAll(dir)
		return outcome{}, err
	}
	o := outcome{res: res, dir: dir}
	o.struck, o.fired = struck(dir)
	for _, c := range res.Checks {
		switch {
		case c.Verdict == checker.Unknown:
			o.unknown = true
		case !checker.Failing(c.Verdict):
		case c.Kind == checker.Own:
			o.own = append(o.own, c)
		case c.Kind == checker.Inherent:
			o.inherent = append(o.inherent, c)
		default:
			o.untold = append(o.untold, c)
		}
	}
	return o, nil
}

// struck reports whether the history in dir records a fault or a crash:
// whether any drawn fault happened; and which of the scenario's
// failpoints fired, as its end says (nil when it does not). Without a
// history it says yes, the answer that hides nothing.
func struck(dir string) (bool, []bool) {
	ops, err := history.ReadFile(filepath.Join(dir, runner.HistoryFile))
	if err != nil {
		return true, nil
	}
	var fired []bool
	if i := slices.IndexFunc(ops, func(op history.Op) bool { return op.Kind == history.KindEnd && op.End != nil }); i >= 0 {
		fired = ops[i].End.Fired
	}
	return slices.ContainsFunc(ops, func(op history.Op) bool {
		return op.Kind == history.KindFault || op.Kind == history.KindCrash
	}), fired
}

// shrink drops the drawn faults of plan one at a time, last first, and
// keeps each drop after which the run still shows f as the lock's own. It
// makes at most maxShrink reruns and returns the smallest plan, its run,
// how many reruns it made, and whether ctx's end cut it short: then the
// smallest plan is the smallest it had seen fail alike by then.
func (e *explorer) shrink(ctx context.Context, plan schedule.Plan, o outcome, f failure) (schedule.Plan, outcome, int, bool) {
	keep := make([]int, len(plan.Faults))
	for i := range keep {
		keep[i] = i
	}
	reruns := 0
	for i := len(keep) - 1; i >= 0 && reruns < maxShrink; i-- {
		if ctx.Err() != nil {
			return plan, o, reruns, true
		}
		fewer := slices.Delete(slices.Clone(keep), i, i+1)
		smaller, err := plan.Keeping(fewer)
		if err != nil {
			break // cannot happen: fewer are drawn indexes
		}
		reruns++
		// The kind decides what the lock is blamed for, so these reruns
		// keep the reference.
		got, err := e.try(ctx, smaller, true)
		if err != nil && ctx.Err() != nil {
			e.progress(smaller, "shrink: cut short by the end; kept "+plan.String())
			return plan, o, reruns, true
		}
		if err != nil {
			e.progress(smaller, "shrink: could not run: "+err.Error())
			continue
		}
		e.progress(smaller, "shrink: "+got.summary())
		if !got.showsOwn(f) {
			os.RemoveAll(got.dir)
			continue
		}
		os.RemoveAll(o.dir)
		keep, plan, o = fewer, smaller, got
	}
	return plan, o, reruns, false
}

// progress reports one run: a line each, or on a terminal one line
// rewritten in place.
func (e *explorer) progress(plan schedule.Plan, what string) {
	w := e.cfg.Progress
	if w == nil {
		return
	}
	if !e.cfg.Terminal {
		// The run's number in the runs file and the bug table, whatever
		// order parallel runs end in.
		fmt.Fprintf(w, "run %d (replay %s): %s\n", plan.Run, plan.Replay(), what)
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
	fmt.Fprintf(w, "\r\033[Kruns %d%s, bugs %d (own runs %d), inherent %d%s, unknown %d",
		e.rep.Runs, left, len(e.rep.Bugs), e.rep.Own, e.rep.Inherent, untold, e.rep.Unknown)
}

// progressEnd ends the updating line.
func (e *explorer) progressEnd() {
	if e.cfg.Progress != nil && e.cfg.Terminal {
		fmt.Fprintln(e.cfg.Progress)
	}
}

// ReplayLine is the command line that replays b, to paste as it is.
func (r *Report) ReplayLine(b Bug) string {
	if r.Command == "" {
		return fmt.Sprintf("check explore -lock %s -topology %s -replay %s", r.Lock, r.Topology, b.Replay)
	}
	return r.Command + " -replay " + b.Replay
}
