package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/compare"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/suite"
)

// runCompare is check compare: every lock of the comparison under every
// fault class, written as compare.html and compare.json into the report
// folder and printed as a table. It exits 0 when the table was made,
// whatever its verdicts, since failing verdicts are what it compares.
func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "locklab-report", "report folder; made when missing, locked while check runs")
	parallel := fs.Int("parallel", defaultParallel(), "how many runs at once")
	fresh := fs.Bool("fresh", false, "start every run's servers anew, rather than reusing a deployment of an earlier run whose faults struck no server, reset to fresh")
	backend := fs.String("backend", "local", "where the servers run: local (processes) or docker")
	seed := fs.Int64("seed", 1, "seed of the clients' retry jitter; run k of a cell uses seed+k-1")
	runs := fs.Int("runs", 3, "how many runs make each cell; the cell shows the worst and how many gave it")
	only := fs.String("locks", "", "only these rows, by lock name, comma-separated (default: every row)")
	classes := fs.String("classes", "", "only these fault classes, comma-separated (default: every class)")
	var own names
	fs.Var(&own, "lock", "a lock of your own, as a row beside the references of its service; repeatable (exec:'COMMAND' for a lock program, which needs -service)")
	service := fs.String("service", "", "with -lock: the service your locks run on ("+serviceList()+")")
	asJSON := fs.Bool("json", false, "print the comparison as JSON instead of the table")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: check compare [-out DIR] [-parallel N] [-fresh] [-backend local|docker] [-seed N] [-runs N] [-locks L,…] [-lock NAME … [-service S]] [-classes C,…] [-json]")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintln(stderr, "check compare:", err)
		return exitUsage
	}
	opts := compare.Options{Locks: listFlag(*only), Classes: listFlag(*classes), Runs: *runs, Own: own, Service: cluster.Service(*service)}
	var err error
	switch {
	case *service != "" && len(own) == 0:
		err = errors.New("-service goes with -lock: it says which service your locks run on")
	case *service != "" && len(cluster.TopologiesOf(opts.Service)) == 0:
		err = fmt.Errorf("unknown service %q; the services are %s", *service, serviceList())
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case *runs < 1:
		err = fmt.Errorf("-runs must be at least 1, got %d", *runs)
	case *parallel < 1:
		err = fmt.Errorf("-parallel must be at least 1, got %d", *parallel)
	case *out == "":
		err = errors.New("-out must not be empty")
	}
	if err == nil {
		err = compare.Validate(opts)
	}
	if err == nil {
		opts.Suite.Backend, err = parseBackend(*backend)
	}
	if err == nil {
		err = prepareOut(*out)
	}
	if err != nil {
		fmt.Fprintln(stderr, "check compare:", err)
		return exitUsage
	}
	opts.Suite = suite.Options{Out: *out, Seed: *seed, Progress: stderr, Backend: opts.Suite.Backend, Parallel: *parallel, Fresh: *fresh,
		// One server that would not heal in time is one cell's run not
		// made, not the end of the other cells.
		KeepGoing: true}
	return compareIn(ctx, opts, *asJSON, stdout, stderr)
}

// compareIn runs the comparison opts asks for with the report folder
// locked, saves it and prints it.
func compareIn(ctx context.Context, opts compare.Options, asJSON bool, stdout, stderr io.Writer) int {
	unlock, err := lockOut(opts.Suite.Out)
	if err != nil {
		fmt.Fprintln(stderr, "check compare:", err)
		return exitUsage
	}
	defer unlock()
	if err := opts.Suite.Backend.Ready(ctx, true); err != nil {
		fmt.Fprintln(stderr, "check compare:", err)
		return exitMismatch
	}
	t, err := compare.Run(ctx, opts)
	if err == nil {
		err = compare.Save(opts.Suite.Out, t)
	}
	if err == nil {
		// Again, now that the index has a comparison to link.
		var runs []reports.Run
		if runs, err = reports.LoadRuns(opts.Suite.Out); err == nil {
			err = reports.WriteIndex(opts.Suite.Out, runs)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "check compare:", err)
		if ctx.Err() != nil {
			return 130
		}
		return exitMismatch
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(t)
	} else {
		err = compare.WriteText(stdout, t)
		fmt.Fprintf(stdout, "page: %s\n", filepath.Join(opts.Suite.Out, compare.PageFile))
	}
	if err != nil {
		fmt.Fprintln(stderr, "check compare:", err)
		return exitMismatch
	}
	return exitOK
}

// names is a flag given once per name (-lock A -lock B).
type names []string

// String is the names given, for flag's help.
func (n *names) String() string { return strings.Join(*n, " ") }

// Set adds one name.
func (n *names) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("names no lock")
	}
	*n = append(*n, s)
	return nil
}

// listFlag is a comma-separated flag's names, or nil when it is empty.
func listFlag(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var names []string
	for _, n := range strings.Split(s, ",") {
		names = append(names, strings.TrimSpace(n))
	}
	return names
}
