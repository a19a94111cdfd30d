package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/explore/schedule"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/suite"
)

// exploreFlags are the flags of `check explore`.
type exploreFlags struct {
	fs          *flag.FlagSet
	lock        *string
	topology    *string
	service     *string
	time        *time.Duration
	runs        *int
	seed        *int64
	replay      *string
	stopAtFirst *bool
	stopAfter   *int
	keepGoing   *bool
	json        *bool
	out         *string
	backend     *string
	faults      *string
	parallel    *int
	shard       *string
	kind        *string
	fresh       *bool
	ttl         *time.Duration
}

func newExploreFlags() exploreFlags {
	fs := flag.NewFlagSet("check explore", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return exploreFlags{
		fs:          fs,
		lock:        fs.String("lock", "", "the lock to explore (see check list; exec:'COMMAND' for a lock program); required"),
		topology:    fs.String("topology", "", topologyNames()+" (default: the lock's first)"),
		service:     fs.String("service", "", "explore on this lock service's first topology the lock runs on ("+serviceList()+"), drawing every fault it supports"),
		time:        fs.Duration("time", 0, "explore for this long (default 2m)"),
		runs:        fs.Int("runs", 0, "explore this many runs instead of for a time"),
		seed:        fs.Int64("seed", 0, "draws every run's seed (default: from the clock, printed)"),
		replay:      fs.String("replay", "", "make one run of this schedule, vN:SEED or vN:SEED:i,j as printed by an earlier explore (a bare SEED or SEED:i,j is of version 1)"),
		stopAtFirst: fs.Bool("stop-at-first", false, "stop at the first bug, once shrunk (for CI)"),
		stopAfter:   fs.Int("stop-after", 0, "stop once this many distinct bugs are found, each shrunk (0: explore until -time or -runs are spent)"),
		keepGoing:   fs.Bool("keep-going", false, "explore until -time or -runs are spent (the default; kept for old scripts)"),
		json:        fs.Bool("json", false, "print the report as one JSON object instead of the summary"),
		out:         fs.String("out", "locklab-report", "report folder each bug's run folder goes into"),
		backend:     fs.String("backend", "local", "where the servers run: local (processes) or docker (containers, whose images make docker builds)"),
		kind:        fs.String("kind", "", kindUsage),
		ttl:         fs.Duration("ttl", 0, "the lease the lock holds, e.g. 1s: every schedule timed against a shorter TTL is stretched to it. Default: the lease the lock's own requests show (a lock program's), learned by the first runs; a replay learns it again"),
		parallel:    fs.Int("parallel", defaultParallel(), "how many runs at once, each with servers of its own (runs mostly wait on timers); run i draws the same schedule whatever it is; default four a core, or fewer for a service whose runs cost more (ZooKeeper: one more than the cores)"),
		fresh:       fs.Bool("fresh", false, "start every run's servers anew, rather than reusing a deployment of an earlier run whose faults struck no server, reset to fresh"),
		shard: fs.String("shard", "", "run share I/N (I from 0) of the runs one process with the same -seed makes: those numbered I modulo N; "+
			"default from JOB_COMPLETION_INDEX and "+shardsEnv+" when both are set (a Kubernetes Indexed Job); the report goes to -out/shard-I"),
		faults: fs.String("faults", "", "the fault kinds to draw, comma-separated: NAME,NAME draws only those, -NAME leaves one out "+
			"(e.g. -faults -slow-work for a lock whose work is bounded); a replay needs the same; default every kind"),
	}
}

// exploreUsage prints how to call check explore.
func exploreUsage(w io.Writer) {
	fmt.Fprint(w, `usage: check explore -lock NAME [-topology T | -service S] [-ttl D] [-time D | -runs N] [-seed S] [-faults KINDS] [-stop-at-first | -stop-after N] [-json] [-out DIR] [-backend local|docker] [-parallel N] [-fresh] [-shard I/N]
       check explore -lock NAME [-topology T | -service S] [-faults KINDS] -replay vN:SEED[:i,j]
       check merge [-out DIR] [-json] DIR...

Runs the lock again and again, each run a few seconds under faults drawn at
random from the run's seed, until -time or -runs are spent. A failing
verdict the reference lock does not share under the same schedule is the
lock's own. Own failures are grouped into distinct bugs by a signature: the
checker and verdict, and the kind and phase of each fault the shrunk
schedule keeps. Each bug is shrunk to the fewest faults that still show it
and written to DIR/explore-NAME-T-N; a replay goes to DIR/explore-NAME-T-replay.
The report is also written as DIR/explore-NAME-T-report.json, and every run,
with its number, seed, replay and outcome, to DIR/explore-NAME-T-runs.jsonl.

A campaign too large for one machine is split into N shards with the same
-seed, each run with -shard I/N (a Kubernetes Indexed Job sets it: see
docker/k8s); check merge builds one report and one list of bugs from them.

flags:
`)
	f := newExploreFlags()
	f.fs.SetOutput(w)
	f.fs.PrintDefaults()
	fmt.Fprint(w, "\nfault kinds (-faults), and the services (or topologies) each is drawn on:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range schedule.Kinds() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", k.Name, drawnOn(k), k.About)
	}
	tw.Flush()
	fmt.Fprint(w, `
Exit codes: 0 no bug, 1 a bug was found (or the exploration could not
run), 2 bad input or -out unusable or in use.
`)
}

// exploreInput is what the explore command line asked for.
type exploreInput struct {
	cfg  explore.Config
	json bool
}

// parseExplore reads the flags of check explore, and the shard from the
// environment (lookupEnv is os.LookupEnv but in tests); every error is one
// line.
func parseExplore(args []string, stdout io.Writer, lookupEnv func(string) (string, bool)) (exploreInput, error) {
	f, given, err := parseExploreFlags(args, stdout)
	if err != nil {
		return exploreInput{}, err
	}
	if err := exploreFlagConflict(f, given); err != nil {
		return exploreInput{}, err
	}
	cfg, err := exploreConfig(f, given)
	if err != nil {
		return exploreInput{}, err
	}
	if cfg.Shard, err = shardOf(*f.shard, given, lookupEnv); err != nil {
		return exploreInput{}, err
	}
	if cfg.Shard.Count > 1 {
		if given["replay"] {
			return exploreInput{}, errors.New("-replay makes one run: it is not sharded")
		}
		if !given["seed"] {
			return exploreInput{}, fmt.Errorf("shard %s needs -seed: every shard of a campaign draws from the same seed", cfg.Shard)
		}
		cfg.Dir = filepath.Join(cfg.Dir, fmt.Sprintf("shard-%d", cfg.Shard.Index))
	}
	// Last, so that bad input never leaves a report folder behind.
	if err := prepareOut(cfg.Dir); err != nil {
		return exploreInput{}, err
	}
	return exploreInput{cfg: cfg, json: *f.json}, nil
}

// shardsEnv is the variable that tells a shard of a Kubernetes Indexed Job
// how many shards there are; Kubernetes sets JOB_COMPLETION_INDEX alone.
const shardsEnv = "LOCKLAB_SHARDS"

// shardOf is the shard -shard names, or else the one the environment
// names: JOB_COMPLETION_INDEX with LOCKLAB_SHARDS. The zero Shard is the
// whole exploration.
func shardOf(flagValue string, given map[string]bool, lookupEnv func(string) (string, bool)) (explore.Shard, error) {
	if given["shard"] {
		sh, err := explore.ParseShard(flagValue)
		if err != nil {
			return explore.Shard{}, fmt.Errorf("-shard: %w", err)
		}
		return sh, nil
	}
	index, hasIndex := lookupEnv("JOB_COMPLETION_INDEX")
	count, hasCount := lookupEnv(shardsEnv)
	switch {
	case !hasIndex && !hasCount:
		return explore.Shard{}, nil
	case !hasCount:
		return explore.Shard{}, fmt.Errorf("JOB_COMPLETION_INDEX is set but %s is not: set it to the Job's completions", shardsEnv)
	case !hasIndex:
		return explore.Shard{}, fmt.Errorf("%s is set but JOB_COMPLETION_INDEX is not: give -shard I/N", shardsEnv)
	}
	sh, err := explore.ParseShard(index + "/" + count)
	if err != nil {
		return explore.Shard{}, fmt.Errorf("JOB_COMPLETION_INDEX and %s: %w", shardsEnv, err)
	}
	return sh, nil
}

// parseExploreFlags is the flags of args, and which of them were given:
// a flag given its default value still counts, as the rules between flags
// are about what the user asked for.
func parseExploreFlags(args []string, stdout io.Writer) (exploreFlags, map[string]bool, error) {
	f := newExploreFlags()
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			exploreUsage(stdout)
		}
		return exploreFlags{}, nil, err
	}
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	return f, given, nil
}

// exploreFlagConflict is the first rule the flags break on their own,
// before any lock is looked up, or nil.
func exploreFlagConflict(f exploreFlags, given map[string]bool) error {
	switch {
	case f.fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q (see check explore -h)", f.fs.Arg(0))
	case *f.lock == "":
		return errors.New("explore needs -lock NAME (see check list)")
	case given["time"] && given["runs"]:
		return errors.New("give -time or -runs, not both")
	case given["replay"] && (given["time"] || given["runs"] || given["seed"] || given["keep-going"] || given["stop-at-first"]):
		return errors.New("-replay makes one run: it takes no -time, -runs, -seed, -stop-at-first or -keep-going")
	case *f.stopAtFirst && *f.keepGoing:
		return errors.New("give -stop-at-first or -keep-going, not both")
	case *f.parallel < 1:
		return fmt.Errorf("-parallel must be at least 1, got %d", *f.parallel)
	case *f.stopAfter < 0:
		return fmt.Errorf("-stop-after must not be negative, got %d", *f.stopAfter)
	case given["replay"] && given["stop-after"]:
		return errors.New("-replay makes one run: it takes no -stop-after")
	case *f.time < 0 || (given["time"] && *f.time == 0):
		return fmt.Errorf("-time must be positive, got %s", *f.time)
	case *f.runs < 0 || (given["runs"] && *f.runs == 0):
		return fmt.Errorf("-runs must be positive, got %d", *f.runs)
	case *f.out == "":
		return errors.New("-out must not be empty")
	case given["ttl"] && *f.ttl <= 0:
		return fmt.Errorf("-ttl must be a lease above 0, got %s", *f.ttl)
	}
	return nil
}

// exploreConfig is the exploration the flags ask for, once the lock, its
// topology, the fault space, the backend and any replay are known good.
func exploreConfig(f exploreFlags, given map[string]bool) (explore.Config, error) {
	l, ts, err := lockOn(*f.lock, where{topology: *f.topology, service: *f.service, topologyGiven: *f.topology != "", serviceGiven: given["service"]})
	if err != nil {
		return explore.Config{}, err
	}
	t := ts[0] // the lock's first topology, unless -topology says
	ref := l.ReferenceOn(t)
	cfg := explore.Config{Lock: l.Name, New: l.New, Reference: ref.New, SelfReference: ref.Name == l.Name, Topology: t,
		Nested: l.Nested, Runs: *f.runs, Time: *f.time, Seed: *f.seed, StopAtFirst: *f.stopAtFirst, StopAfter: *f.stopAfter, Dir: *f.out, Parallel: *f.parallel,
		Fresh: *f.fresh}
	if !given["parallel"] {
		// Sized by what a run of the service costs (service.Crowded).
		cfg.Parallel = service.Parallel(t, runtime.NumCPU())
	}
	if cfg.Kind, err = parseKind(*f.kind); err != nil {
		return explore.Config{}, err
	}
	if l.Program || cfg.Kind != footprint.Unknown {
		cfg.ReferenceOf = locks.ReferenceOfKind(t, l.Nested)
	}
	cfg.Command = "check explore -lock " + shellQuote(*f.lock) + " -topology " + string(t)
	if cfg.Kind != footprint.Unknown {
		cfg.Command += " -kind " + string(cfg.Kind)
	}
	if cfg.Lease = *f.ttl; cfg.Lease > 0 {
		cfg.Command += " -ttl " + cfg.Lease.String()
	}
	if *f.faults != "" {
		cfg.Faults = []string{*f.faults}
		cfg.Command += " -faults " + shellQuote(*f.faults)
	}
	if *f.backend != "local" {
		cfg.Command += " -backend " + shellQuote(*f.backend)
	}
	space, err := faultSpace(cfg.Faults, t)
	if err != nil {
		return explore.Config{}, err
	}
	if cfg.Backend, err = parseBackend(*f.backend); err != nil {
		return explore.Config{}, err
	}
	if given["replay"] {
		r, err := replayIn(*f.replay, space, t, l.Nested)
		if err != nil {
			return explore.Config{}, err
		}
		cfg.Replay, cfg.Seed = &r, r.Seed
	}
	if !given["seed"] && !given["replay"] {
		// A fresh exploration each time, as Jepsen's; the seed is printed.
		cfg.Seed = 1 + time.Now().UnixNano()%(1<<31-1)
	}
	return cfg, nil
}

// faultSpace is the fault space -faults states, checked against topology
// t now, so that a space with nothing to draw on t is bad input (exit 2)
// rather than an exploration that fails.
func faultSpace(faults []string, t cluster.Topology) (schedule.Space, error) {
	space, err := schedule.NewSpace(faults)
	if err == nil {
		err = space.Check(t)
	}
	if err != nil {
		return schedule.Space{}, fmt.Errorf("-faults: %w", err)
	}
	return space, nil
}

// replayIn is the schedule -replay names, planned once now, so that a
// schedule the space cannot make on t is bad input (exit 2) before any
// server starts.
func replayIn(replay string, space schedule.Space, t cluster.Topology, nested bool) (schedule.Replay, error) {
	r, err := schedule.ParseReplay(replay)
	if err != nil {
		return schedule.Replay{}, fmt.Errorf("-replay: %w", err)
	}
	if _, err := r.PlanIn(space, t, nested); err != nil {
		return schedule.Replay{}, fmt.Errorf("-replay: %w", err)
	}
	return r, nil
}

// drawnOn names where explore draws k: "every service", or each service
// it is drawn on, by its topologies when it is not drawn on all of them
// ("redis: redlock, etcd, zookeeper").
func drawnOn(k schedule.Kind) string {
	var on []string
	all := true
	for _, s := range cluster.Services() {
		var ts []string
		for _, t := range cluster.TopologiesOf(s) {
			if k.DrawnOn(t) {
				ts = append(ts, string(t))
			}
		}
		switch {
		case len(ts) == 0:
			all = false
		case len(ts) == len(cluster.TopologiesOf(s)):
			on = append(on, string(s))
		default:
			all = false
			on = append(on, string(s)+": "+strings.Join(ts, ", "))
		}
	}
	if all {
		return "every service"
	}
	return strings.Join(on, ", ")
}

// runExplore is `check explore`: progress on stderr, the summary or the
// JSON object on stdout.
func runExplore(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	in, err := parseExplore(args, stdout, os.LookupEnv)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "check explore:", err)
		return exitUsage
	}
	unlock, err := lockOut(in.cfg.Dir)
	if err != nil {
		fmt.Fprintln(stderr, "check explore:", err)
		return exitUsage
	}
	defer unlock()
	if err := in.cfg.Backend.Ready(ctx, true); err != nil {
		fmt.Fprintln(stderr, "check explore:", err)
		return exitMismatch
	}
	in.cfg.Progress, in.cfg.Terminal = stderr, isTerminal(stderr)
	if !in.json && in.cfg.Replay == nil {
		shard := ""
		if in.cfg.Shard.Count > 1 {
			shard = fmt.Sprintf(", shard %s into %s", in.cfg.Shard, in.cfg.Dir)
		}
		fmt.Fprintf(stderr, "exploring %s on %s, seed %d%s\n", in.cfg.Lock, in.cfg.Topology, in.cfg.Seed, shard)
	}
	rep, err := explore.Run(ctx, in.cfg)
	if rep == nil {
		fmt.Fprintln(stderr, "check explore:", err)
		return exitMismatch
	}
	for _, b := range rep.Bugs {
		if b.ReportDir != "" {
			// Each bug's run gets its page, like every run of a report.
			err = errors.Join(err, suite.Keep(b.ReportDir, in.cfg.Lock))
		}
	}
	if in.cfg.Replay != nil && len(rep.Bugs) == 0 && rep.ReportDir != "" {
		// So does a replay's, whatever it showed.
		err = errors.Join(err, suite.Keep(rep.ReportDir, in.cfg.Lock))
	}
	if in.json {
		b, jerr := json.MarshalIndent(rep, "", "  ")
		if jerr == nil {
			_, jerr = fmt.Fprintf(stdout, "%s\n", b)
		}
		if jerr != nil && err == nil {
			err = jerr
		}
	} else {
		exploreSummary(stdout, rep, in.cfg)
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "check explore: interrupted")
		return 130
	case rep.Own > 0:
		if err != nil {
			fmt.Fprintln(stderr, "check explore:", err)
		}
		return exitMismatch
	case err != nil:
		fmt.Fprintln(stderr, "check explore:", err)
		return exitMismatch
	}
	return exitOK
}

// exploreSummary prints what the exploration found: the counts, a table
// of the bugs, how each was found and how to replay it, and last the pace
// and the number of bugs.
func exploreSummary(w io.Writer, rep *explore.Report, cfg explore.Config) {
	space := ""
	if rep.Faults != "" {
		space = ", faults: " + rep.Faults
	}
	fmt.Fprintf(w, "%s on %s, seed %d%s: %d runs; own %d, inherent %d, untold %d, unknown %d; missed %d (no drawn fault struck)",
		rep.Lock, rep.Topology, rep.Seed, space, rep.Runs, rep.Own, rep.Inherent, rep.Untold, rep.Unknown, rep.Missed)
	if rep.Flaky > 0 {
		fmt.Fprintf(w, "; %d own violation(s) not shown again by the same schedule", rep.Flaky)
	}
	if rep.Again > 0 {
		fmt.Fprintf(w, "; late %d (the machine ran late: made again)", rep.Again)
	}
	if rep.Errors > 0 {
		fmt.Fprintf(w, "; %d could not run", rep.Errors)
	}
	if rep.CutShort > 0 {
		fmt.Fprintf(w, "; cut short %d (under way at the end: stopped, counted in no outcome)", rep.CutShort)
	}
	if rep.Lease != "" {
		fmt.Fprintf(w, "; timed against %s", rep.Lease)
	}
	fmt.Fprintln(w)
	if len(rep.Bugs) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "bug\tsignature\tfirst s\truns\treplay\tfolder")
		for i, b := range rep.Bugs {
			dir := b.ReportDir
			if dir == "" {
				dir = "-"
			}
			fmt.Fprintf(tw, "%d\t%s\t%.1f\t%d\t%s\t%s\n", i+1, b.Signature, b.FirstS, b.Runs, b.Replay, dir)
		}
		tw.Flush()
	}
	for i, b := range rep.Bugs {
		fmt.Fprintf(w, "\nbug %d: %s\n", i+1, b.Signature)
		for _, c := range b.Checks {
			kind := string(c.Kind)
			if kind == "" {
				kind = "untold"
			}
			fmt.Fprintf(w, "  %s %s (%s): %s\n", c.Checker, c.Verdict, kind, c.Detail)
			if c.Kind == checker.Own && c.KindWhy != "" {
				fmt.Fprintf(w, "    own because %s\n", c.KindWhy)
			}
		}
		if cfg.Replay == nil {
			cut := ""
			if b.ShrinkCut {
				cut = "; the end of -time cut the shrink short: fewer may do"
			}
			fmt.Fprintf(w, "  shrunk from %d faults to %d in %d reruns%s\n", b.Drawn, b.Kept, b.Shrinks, cut)
		}
		fmt.Fprintf(w, "  schedule: %s\n", b.Plan)
		fmt.Fprintf(w, "  replay: %s\n", rep.ReplayLine(b))
	}
	if len(rep.Bugs) > 0 {
		fmt.Fprintln(w)
	}
	if cfg.Replay != nil && len(rep.Bugs) == 0 && rep.ReportDir != "" {
		fmt.Fprintf(w, "run folder: %s\n", rep.ReportDir)
	}
	fmt.Fprintf(w, "%d runs in %.0fs, %.1f runs/min; %d distinct %s\n",
		rep.Runs, rep.WallS, rep.RunsPerMin, len(rep.Bugs), plural(len(rep.Bugs), "bug", "bugs"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// isTerminal reports whether w is a terminal, where progress is one line
// rewritten in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// topologyList is "a and b".
func topologyList(ts []cluster.Topology) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = string(t)
	}
	return strings.Join(names, " and ")
}

// shellQuote is s as one word of a POSIX shell: itself when it needs no
// quoting, else in single quotes ("exec:'php lock.php'" for exec:php
// lock.php).
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,:/=+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
