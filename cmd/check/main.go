// Command check runs locklab's catalogue: the broken and the fixed lock of
// every pitfall in the scenario that exposes it. It prints the verdict matrix
// of the runs it made, writes the report folder, and exits non-zero when any
// of its runs differs from what the catalogue expects. With -lock it runs
// one named lock through every scenario of its topologies instead, and
// exits non-zero when a failing verdict is the lock's own.
//
// Usage:
//
//	check [-pitfall ID|NAME[,ID|NAME…]] [-seed N] [-out DIR] [-duration D] [-json] [-backend local|docker]
//	check -pitfall ID|NAME[,…] -watch [-seed N] [-out DIR] [-duration D]
//	check -lock NAME [-topology T | -service S] [-seed N] [-out DIR] [-duration D] [-json] [-backend local|docker]
//	check list
//	check compare [-out DIR] [-parallel N] [-backend local|docker] [-locks L,…] [-classes C,…] [-json]
//	check explore -lock NAME [-topology T | -service S] [-time D | -runs N] [-seed S] [-stop-at-first] [-replay vN:SEED[:i,j]] [-json] [-out DIR] [-backend local|docker]
//	check verify DIR
//	check workshop [-from DIR] [-out DIR] [-quiz [-answers]]
//	check -lock NAME -grade PITFALL [-seed N] [-out DIR]
//	check help
//
// Without -pitfall every pitfall runs; -pitfall given but empty, or with an
// empty name in its list, is refused. -out (default locklab-report) is made
// when missing and must be a writable folder. Each run goes into its own
// subfolder, <id>-<name>-<variant>[-<scenario>], replacing what an earlier
// run of the same case left there: history.jsonl, result.json, lock.html,
// resource.html and run.json (the run as -json prints it). index.html is
// rebuilt from every run folder present, this invocation's and earlier
// ones', in catalogue order; the table on stdout and the exit code concern
// only this invocation's runs.
//
// Only one check at a time may use a report folder: check holds an
// exclusive lock on DIR/.check.lock (with its pid in it) while it runs, and a
// second check on the same folder stops at once.
//
// A run that did not happen as written (a failpoint never fired, a fault
// was never injected) is reported as "spoiled", its verdicts unknown.
// A run that cannot start because redis-server or MariaDB is missing is
// reported as "skipped" with how to install it, and the other runs go on.
//
// With -watch (and -pitfall or -lock) the runs are made one at a time and
// each is drawn on stdout as it goes (package watch): a lane per client,
// the faults, and the overlaps of holds as they appear; the table follows
// as without it. Neither the runs nor their verdicts change.
//
// A lock run (-lock) has nothing expected of it: it is judged against the
// reference lock of its scenario (locks.Reference), which gives each failing
// verdict a kind, own or inherent; its folder is <lock>-<scenario>. It is as
// it should be when none of its failing verdicts is the lock's own or untold.
//
// Exit codes: 0 when every run was as expected (with -lock: no run had a
// failing verdict that is not inherent, and one run at least judged the
// lock: runs that said nothing of it, spoiled or skipped, do not fail it);
// 1 when a run was not, was spoiled, was skipped or failed, or
// redis-server is missing; 2 for
// bad flags or arguments, an unusable -out, or an -out in use by another
// check; 130 when interrupted. Every error is one line on stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/docker"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/program"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/service/redis"
	"github.com/locklab/locklab/service/sqldb"
	"github.com/locklab/locklab/suite"
	"github.com/locklab/locklab/watch"
)

// Exit codes.
const (
	exitOK       = 0
	exitMismatch = 1 // a run differed from the catalogue, or could not run
	exitUsage    = 2 // bad input, or the report folder cannot be used
)

func main() {
	// go-redis logs every failed dial (redis.Quiet), and the MariaDB
	// driver every broken connection; under injected faults those are
	// expected and the history records them.
	redis.Quiet()
	sqldb.SetLogger(quiet{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type quiet struct{}

func (quiet) Print(...any) {}

// config is what the command line asked for: the pitfalls of the catalogue
// to run, or one lock on some topologies.
type config struct {
	pitfalls   []pitfalls.Pitfall
	lock       locks.Lock // Name "" unless -lock
	topologies []cluster.Topology
	backend    cluster.Backend // nil: local processes
	seed       int64
	out        string
	duration   time.Duration
	json       bool
	parallel   int
	watch      bool           // draw each run's lanes as it goes (package watch)
	kind       footprint.Kind // -kind: where the lock's hold lives, over what its requests show
	ttl        time.Duration  // -ttl: the lease the lock holds, over what its requests show
	fresh      bool           // -fresh: no warm deployments
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "explore" {
		return runExplore(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "compare" {
		return runCompare(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "merge" {
		return runMerge(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "verify" {
		return runVerify(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "workshop" {
		return runWorkshop(args[1:], stdout, stderr)
	}
	if gradeAsked(args) {
		return runGrade(ctx, args, stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "list" || args[0] == "help") {
		if len(args) > 1 {
			fmt.Fprintf(stderr, "check: check %s takes no arguments, got %q\n", args[0], args[1:])
			return exitUsage
		}
		if args[0] == "help" {
			usage(stdout)
		} else {
			list(stdout)
		}
		return exitOK
	}
	cfg, err := parse(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	unlock, err := lockOut(cfg.out)
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	defer unlock()
	if err := cfg.backend.Ready(ctx, true); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitMismatch
	}
	opts := suite.Options{Out: cfg.out, Seed: cfg.seed, Duration: cfg.duration, Progress: stderr, Backend: cfg.backend, Parallel: cfg.parallel,
		ByKind: cfg.lock.Program, Kind: cfg.kind, Lease: cfg.ttl, Fresh: cfg.fresh}
	if cfg.watch {
		tty := isTerminal(stdout)
		opts.Watch = func(label string) (history.Watcher, func()) {
			l := watch.Start(stdout, label, tty)
			return l, l.Stop
		}
	}
	var runs []reports.Run
	if cfg.lock.Name != "" {
		runs, err = suite.Lock(ctx, cfg.lock.Name, cfg.lock.New, cfg.topologies, opts)
	} else {
		runs, err = suite.Catalogue(ctx, cfg.pitfalls, opts)
	}
	if err != nil {
		// The runs made so far are in their folders; the index shows them.
		fmt.Fprintln(stderr, "check:", err)
		if ctx.Err() != nil {
			return 130 // interrupted, as shells report Ctrl-C
		}
		return exitMismatch
	}
	indexed := indexed(cfg.out, runs, stderr)
	if cfg.json {
		err = reports.WriteJSON(stdout, runs)
	} else {
		err = reports.WriteTable(stdout, runs)
		noun := "runs"
		if indexed == 1 {
			noun = "run"
		}
		fmt.Fprintf(stdout, "report: %s (%d %s)\n", filepath.Join(cfg.out, reports.IndexFile), indexed, noun)
	}
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitMismatch
	}
	return exitOf(cfg, runs, stdout)
}

// exitOf is the exit code of the runs: a lock's pass as LockPassed says
// (with its note, under the table), or every catalogue case as expected.
func exitOf(cfg config, runs []reports.Run, stdout io.Writer) int {
	if cfg.lock.Name != "" {
		passed, note := reports.LockPassed(runs)
		if note != "" && !cfg.json {
			fmt.Fprintln(stdout, note)
		}
		if !passed {
			return exitMismatch
		}
		return exitOK
	}
	for _, r := range runs {
		if !r.Pass {
			return exitMismatch
		}
	}
	return exitOK
}

// indexed is how many runs out/index.html shows: every run folder in out
// that could be read, with a warning on stderr for those that could not;
// if out itself cannot be read, the index shows runs.
func indexed(out string, runs []reports.Run, stderr io.Writer) int {
	all, err := reports.LoadRuns(out)
	if err != nil {
		fmt.Fprintln(stderr, "check: warning: the index leaves out what it cannot read:", err)
		if all == nil {
			all = runs
		}
	}
	return len(all)
}

// flags are the command line's flags, before they are checked.
type flags struct {
	fs       *flag.FlagSet
	only     *string
	lock     *string
	topology *string
	service  *string
	seed     *int64
	out      *string
	duration *time.Duration
	json     *bool
	backend  *string
	parallel *int
	kind     *string
	ttl      *time.Duration
	watch    *bool
	fresh    *bool
}

// defaultParallel is how many runs check, explore and compare make at once
// unless told: four a core. A run mostly waits on TTLs and timers; on the
// 2-core CI machine the whole catalogue took 67 s at 4 runs at
// once, 50 s at 6, 39 s at 8 and 40 s at 12, where the cores ran out.
func defaultParallel() int { return 4 * runtime.NumCPU() }

func newFlags() flags {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// Errors are reported in one line by the caller; the usage text is only
	// for -h and check help.
	fs.Usage = func() {}
	return flags{
		fs:       fs,
		only:     fs.String("pitfall", "", "run only these pitfalls: IDs or names, comma-separated (default: all)"),
		lock:     fs.String("lock", "", "run this lock (see check list; exec:'COMMAND' for a lock program) through every scenario of its topologies, instead of the catalogue"),
		topology: fs.String("topology", "", "with -lock: only this topology's scenarios ("+topologyNames()+")"),
		service:  fs.String("service", "", serviceUsage()),
		seed:     fs.Int64("seed", 1, "seed of the clients' retry jitter"),
		out:      fs.String("out", "locklab-report", "report folder; made when missing, locked while check runs"),
		duration: fs.Duration("duration", 0, "how long each workload runs (0: the scenario's own)"),
		json:     fs.Bool("json", false, "print a JSON array instead of the table"),
		backend:  fs.String("backend", "local", "where the servers run: local (processes) or docker (containers, whose images make docker builds)"),
		parallel: fs.Int("parallel", defaultParallel(), "how many runs at once, each with servers and ports of its own (runs mostly wait on timers); a run the others' load may have unsettled is made again alone"),
		kind:     fs.String("kind", "", kindUsage),
		ttl:      fs.Duration("ttl", 0, ttlUsage),
		fresh:    fs.Bool("fresh", false, "start every run's servers anew, rather than reusing a deployment of an earlier run whose faults struck no server, reset to fresh"),
		watch:    fs.Bool("watch", false, "with -pitfall or -lock: draw each run's lanes (holds, faults, overlaps) on stdout as it goes, one run at a time, then the table"),
	}
}

// usage prints how to call check.
func usage(w io.Writer) {
	fmt.Fprint(w, `usage: check [flags]   run the catalogue and write the report folder
       check -lock NAME [flags]
                       run one lock through every scenario of its topologies
       check list      list pitfalls, locks and scenarios
       check compare   which lock? every lock under every fault class (check compare -h)
       check explore   random fault schedules for one lock (check explore -h)
       check merge DIR...
                       one report from the shards of an exploration (check merge -h)
       check verify DIR
                       re-check the saved histories of a run or report folder (check verify -h)
       check workshop  write a workshop folder from a report folder (check workshop -h)
       check -lock NAME -grade PITFALL
                       grade a lock against a pitfall's fix: which scenario still fails
       check help      print this help

flags:
`)
	f := newFlags()
	f.fs.SetOutput(w)
	f.fs.PrintDefaults()
	fmt.Fprint(w, `
Each run goes into its own folder under -out; index.html shows every run
the folder holds. A run that cannot start because redis-server or MariaDB
is missing is skipped. A -lock run is judged against a correct reference
lock: each failing verdict is own (the lock's bug) or inherent (the fault
beats any such lock). Exit codes: 0 every run as expected (with -lock: no
failing verdict of the lock's own, and a run at least that judged it; runs
that said nothing of it, such as a fault no relay could bring to a program,
are counted apart and do not fail it), 1 a run was not (or was spoiled,
was skipped, failed), 2 bad input or -out unusable or in use by another check.
`)
}

// parse reads the flags and makes the report folder; every error is one
// line. -h prints the usage to stdout and returns flag.ErrHelp.
func parse(args []string, stdout io.Writer) (config, error) {
	f := newFlags()
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
		}
		return config{}, err
	}
	fs := f.fs
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q (flags go before it; see check -h)", fs.Arg(0))
	}
	if *f.duration < 0 {
		return config{}, fmt.Errorf("-duration must not be negative, got %s", *f.duration)
	}
	if *f.out == "" {
		return config{}, errors.New("-out must not be empty")
	}
	if *f.parallel < 1 {
		return config{}, fmt.Errorf("-parallel must be at least 1, got %d", *f.parallel)
	}
	cfg := config{seed: *f.seed, out: *f.out, duration: *f.duration, json: *f.json, parallel: *f.parallel, watch: *f.watch, ttl: *f.ttl, fresh: *f.fresh}
	var err error
	if cfg.backend, err = parseBackend(*f.backend); err != nil {
		return config{}, err
	}
	if cfg.kind, err = parseKind(*f.kind); err != nil {
		return config{}, err
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if given["kind"] && !given["lock"] {
		return config{}, errors.New("-kind goes with -lock: it says where the lock's hold lives")
	}
	if err := ttlFits(*f.ttl, given); err != nil {
		return config{}, err
	}
	if err := watchFits(cfg, given); err != nil {
		return config{}, err
	}
	switch {
	case given["lock"] && given["pitfall"]:
		return config{}, errors.New("give -lock or -pitfall, not both")
	case (given["topology"] || given["service"]) && !given["lock"]:
		return config{}, errors.New("-topology and -service go with -lock (the catalogue runs every topology)")
	case given["lock"]:
		w := where{topology: *f.topology, service: *f.service, topologyGiven: given["topology"], serviceGiven: given["service"]}
		if cfg.lock, cfg.topologies, err = lockOn(*f.lock, w); err != nil {
			return config{}, err
		}
	case !given["pitfall"]:
		cfg.pitfalls = pitfalls.Catalogue()
	default:
		if cfg.pitfalls, err = lookup(*f.only); err != nil {
			return config{}, err
		}
	}
	if err := storyFits(cfg); err != nil {
		return config{}, err
	}
	if err := prepareOut(cfg.out); err != nil {
		return config{}, err
	}
	return cfg, nil
}

// watchFits refuses the flags -watch cannot go with: it draws the runs one
// at a time on stdout, so it needs runs named and stdout to itself.
func watchFits(cfg config, given map[string]bool) error {
	switch {
	case !cfg.watch:
		return nil
	case !given["pitfall"] && !given["lock"]:
		return errors.New("-watch draws the runs of -pitfall or -lock: name what to watch, e.g. check -pitfall 5 -watch")
	case cfg.parallel > 1 && given["parallel"]:
		return fmt.Errorf("-watch makes the runs one at a time, so that their lanes do not mix: leave out -parallel %d", cfg.parallel)
	case cfg.json:
		return errors.New("-watch draws on stdout, where -json writes its array: give one of them")
	}
	return nil
}

// storyFits refuses a -duration shorter than a chosen scenario's story, before
// any run starts.
func storyFits(cfg config) error {
	if cfg.duration == 0 {
		return nil
	}
	var chosen []runner.Scenario
	for _, p := range cfg.pitfalls {
		for _, c := range p.Cases() {
			s, err := scenarios.Lookup(c.Scenario)
			if err != nil {
				return err
			}
			chosen = append(chosen, s)
		}
	}
	for _, s := range scenarios.All() {
		if slices.Contains(cfg.topologies, s.Topology) {
			chosen = append(chosen, s)
		}
	}
	for _, s := range chosen {
		if cfg.duration < s.MinDuration {
			return fmt.Errorf("-duration %s is too short for scenario %s, whose story needs at least %s", cfg.duration, s.Name, s.MinDuration)
		}
	}
	return nil
}

// lockTopologies finds the lock -lock names and the topologies it runs on:
// every one it supports, or only -topology when given.
func lockTopologies(name, topology string, given bool) (locks.Lock, []cluster.Topology, error) {
	if strings.TrimSpace(name) == "" {
		return locks.Lock{}, nil, errors.New("-lock names no lock (see check list)")
	}
	l, err := locks.Lookup(name)
	if err != nil {
		return locks.Lock{}, nil, err
	}
	if !given && strings.HasPrefix(name, program.Prefix) {
		// A lock program may know one topology only: single unless told.
		return l, l.Topologies[:1], nil
	}
	if !given {
		return l, l.Topologies, nil
	}
	t := cluster.Topology(topology)
	if !l.Supports(t) {
		return locks.Lock{}, nil, fmt.Errorf("lock %s runs on %s, not on topology %q", l.Name, topologyList(l.Topologies), topology)
	}
	return l, []cluster.Topology{t}, nil
}

// lookup finds the pitfalls a -pitfall list names, each once, in the order
// named.
func lookup(list string) ([]pitfalls.Pitfall, error) {
	if strings.TrimSpace(list) == "" {
		return nil, errors.New("-pitfall names no pitfall (leave the flag out to run them all; see check list)")
	}
	var found []pitfalls.Pitfall
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("-pitfall %q has an empty name in its list", list)
		}
		ps, err := pitfalls.Lookup(name)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if !slices.ContainsFunc(found, func(q pitfalls.Pitfall) bool { return q.Name == p.Name }) {
				found = append(found, p)
			}
		}
	}
	return found, nil
}

// prepareOut makes the report folder when it is missing and checks that it
// is a folder check can write in.
func prepareOut(out string) error {
	if info, err := os.Stat(out); err == nil && !info.IsDir() {
		return fmt.Errorf("-out %s is a file, not a folder", out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("-out %s: cannot make the folder: %v", out, err)
	}
	f, err := os.CreateTemp(out, ".check-write-test-*")
	if err != nil {
		return fmt.Errorf("-out %s: cannot write in the folder: %v", out, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// list prints the catalogue, the locks and the scenarios.
func list(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPITFALL\tSCENARIO\tCAUGHT BY\tTITLE")
	for _, p := range pitfalls.Catalogue() {
		var caught []string
		for _, c := range checker.Checkers {
			if v, ok := p.Catches[c]; ok {
				caught = append(caught, c+" "+string(v))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.ID, p.Name, p.Scenario, strings.Join(caught, ", "), p.Title)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCK\tGROUP\tTOPOLOGIES\tABOUT")
	for _, l := range locks.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Name, l.Group(), topologyList(l.Topologies), l.About)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tTOPOLOGY\tWHAT IT DOES")
	for _, s := range scenarios.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Topology, s.Description)
	}
	tw.Flush()
}

// parseBackend is the backend a -backend flag names; nil means local
// processes.
func parseBackend(name string) (cluster.Backend, error) {
	switch name {
	case "local":
		return local.Local{}, nil
	case "docker":
		return docker.Docker{}, nil
	}
	return nil, fmt.Errorf("unknown -backend %q (local or docker)", name)
}

// ttlUsage says what -ttl takes.
const ttlUsage = "with -lock: the lease the lock holds, e.g. 1s; every scenario timed against a shorter TTL is stretched to it " +
	"(its TTL, work, pauses and faults scaled alike). Default: the lease the lock's own requests show (a lock program's), learned in its first run"

// ttlFits refuses a -ttl that is not a lease, or one without a lock to
// hold it.
func ttlFits(ttl time.Duration, given map[string]bool) error {
	switch {
	case !given["ttl"]:
		return nil
	case ttl <= 0:
		return fmt.Errorf("-ttl must be a lease above 0, got %s", ttl)
	case !given["lock"]:
		return errors.New("-ttl goes with -lock: it says the lease the lock holds")
	}
	return nil
}

// kindUsage says what -kind takes.
const kindUsage = "where the lock's hold lives, which picks the reference lock it is measured against: session (the server frees it with the connection: GET_LOCK, an advisory lock, an ephemeral node) or data (a key or row with an expiry); default: what a lock program's own requests show"

// parseKind reads -kind: "", session or data.
func parseKind(s string) (footprint.Kind, error) {
	switch k := footprint.Kind(s); k {
	case footprint.Unknown, footprint.Session, footprint.Data:
		return k, nil
	}
	return "", fmt.Errorf("-kind %q: want session or data", s)
}
