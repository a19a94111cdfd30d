// Command check runs locklab's catalogue: the broken and the fixed lock of
// every pitfall in the scenario that exposes it. It prints the verdict matrix,
// writes the report folder, and exits non-zero when any run differs from what
// the catalogue expects.
//
// Usage:
//
//	check [-pitfall ID[,ID…]] [-seed N] [-out DIR] [-duration D] [-json]
//	check list
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
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenarios"
)

// Exit codes.
const (
	exitOK       = 0
	exitMismatch = 1 // a run differed from the catalogue, or could not run
	exitUsage    = 2
)

func main() {
	// go-redis logs every failed dial; under injected faults those are
	// expected and the history records them.
	redis.SetLogger(quiet{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// config is what the command line asked for.
type config struct {
	pitfalls []pitfalls.Pitfall
	seed     int64
	out      string
	duration time.Duration
	json     bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "list" {
		if len(args) > 1 {
			fmt.Fprintf(stderr, "check list takes no arguments, got %q\n", args[1:])
			return exitUsage
		}
		list(stdout)
		return exitOK
	}
	cfg, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	if _, err := cluster.RedisServerPath(); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitMismatch
	}
	runs, err := catalogue(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		if ctx.Err() != nil {
			return 130 // interrupted, as shells report Ctrl-C
		}
		return exitMismatch
	}
	if err := reports.WriteIndex(cfg.out, runs); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitMismatch
	}
	if cfg.json {
		err = reports.WriteJSON(stdout, runs)
	} else {
		err = reports.WriteTable(stdout, runs)
		fmt.Fprintf(stdout, "report: %s\n", filepath.Join(cfg.out, "index.html"))
	}
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitMismatch
	}
	for _, r := range runs {
		if !r.Pass {
			return exitMismatch
		}
	}
	return exitOK
}

// parse reads the flags; every error is one line.
func parse(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	only := fs.String("pitfall", "", "run only these pitfalls: IDs or names, comma-separated")
	seed := fs.Int64("seed", 1, "seed of the clients' retry jitter")
	out := fs.String("out", "locklab-report", "report folder")
	duration := fs.Duration("duration", 0, "how long each workload runs (0: the scenario's own)")
	asJSON := fs.Bool("json", false, "print a JSON array instead of the table")
	// Errors are reported in one line by the caller; the usage text is only
	// for -h.
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "usage: check [flags]   run the catalogue\n       check list      list pitfalls and scenarios")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
		}
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q (flags go before it; see check -h)", fs.Arg(0))
	}
	if *duration < 0 {
		return config{}, fmt.Errorf("-duration must not be negative, got %s", *duration)
	}
	if *out == "" {
		return config{}, errors.New("-out must not be empty")
	}
	cfg := config{seed: *seed, out: *out, duration: *duration, json: *asJSON}
	if *only == "" {
		cfg.pitfalls = pitfalls.Catalogue()
		return cfg, nil
	}
	for _, name := range strings.Split(*only, ",") {
		found, err := pitfalls.Lookup(strings.TrimSpace(name))
		if err != nil {
			return config{}, err
		}
		cfg.pitfalls = append(cfg.pitfalls, found...)
	}
	return cfg, nil
}

// catalogue runs both variants of each pitfall, one run at a time because
// scenarios are timed against real clocks, and reports progress on stderr.
func catalogue(ctx context.Context, cfg config, progress io.Writer) ([]reports.Run, error) {
	var runs []reports.Run
	total := 0
	for _, p := range cfg.pitfalls {
		total += len(p.Cases())
	}
	for _, p := range cfg.pitfalls {
		for _, c := range p.Cases() {
			name := fmt.Sprintf("%d-%s-%s", p.ID, p.Name, c.Variant)
			if c.Scenario != p.Scenario {
				name += "-" + c.Scenario
			}
			dir := filepath.Join(cfg.out, name)
			if err := os.RemoveAll(dir); err != nil {
				return nil, err
			}
			fmt.Fprintf(progress, "[%d/%d] %s %s in %s … ", len(runs)+1, total, p.Name, c.Variant, c.Scenario)
			res, err := scenarios.Run(ctx, c.Scenario, c.Locker, harness.Options{
				Seed: cfg.seed, Dir: dir, Lock: p.Name + "/" + string(c.Variant), Duration: cfg.duration,
			})
			if err != nil && !errors.Is(err, harness.ErrNotExercised) {
				fmt.Fprintln(progress, "error")
				return nil, err
			}
			r := reports.NewRun(p, c, res)
			verdict := "as expected"
			if !r.Pass {
				verdict = "NOT as expected: " + strings.Join(check.Mismatches(r.Expected, r.Verdicts), "; ")
			}
			fmt.Fprintf(progress, "%s (%s)\n", verdict, res.Duration.Round(time.Millisecond))
			for _, why := range res.NotExercised {
				fmt.Fprintf(progress, "    not exercised: %s\n", why)
			}
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// list prints the catalogue and the scenarios.
func list(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPITFALL\tSCENARIO\tCAUGHT BY\tTITLE")
	for _, p := range pitfalls.Catalogue() {
		var caught []string
		for _, c := range check.Checkers {
			if v, ok := p.Catches[c]; ok {
				caught = append(caught, c+" "+string(v))
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", p.ID, p.Name, p.Scenario, strings.Join(caught, ", "), p.Title)
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
