// Package compare answers "which lock should we use?": it runs one row per
// lock through one scenario per fault class, with the runs and pages of
// package suite, and lays the verdicts out as a table (text, HTML and
// JSON) with each lock's throughput and median handover.
package compare

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/suite"
)

// Class is a fault class: one column of the comparison.
type Class struct {
	Name  string `json:"name"`
	Title string `json:"title"`
}

// Row is one lock of the comparison: the registry's lock, how the table
// calls it, its family, and the topologies it runs on, the first with a
// scenario for a class serving that class.
type Row struct {
	Lock       string
	Title      string
	Family     string
	Topologies []cluster.Topology
	// Scenarios overrides the topology's scenario for a class, where this
	// lock has one of its own (Redis+WAIT's failover-wait).
	Scenarios map[string]string
	// Why says, per class, why this lock has no run of it, where the
	// reason is the lock's rather than the topology's: such a class is "—"
	// even where the topology has a scenario of it.
	Why map[string]string
	// File is the program a lock exec:COMMAND runs, relative to the
	// repository's root: the row is left out, with a note, when check
	// compare runs where it is not.
	File string
	// Own says the user named this lock (-lock): it is shown beside the
	// references of its service rather than among them.
	Own bool
}

// where is a fault class on a topology.
type where struct {
	class    string
	topology cluster.Topology
}

// Options say which rows and columns to run and how.
type Options struct {
	Suite   suite.Options
	Locks   []string // rows to keep, by lock name; nil: every row
	Classes []string // columns to keep, by name; nil: every class
	// Runs is how many runs make each cell, run k with the seed
	// Suite.Seed+k-1; 0 means 1. A fault that races the clients (a
	// failover) can give different verdicts on different runs.
	Runs int
	// Own are the user's locks, each a row of its own: a lock's name or
	// exec:COMMAND. With Locks nil, the rows are these and the references
	// of their services.
	Own []string
	// Service is the service the Own locks run on; "" is every service
	// a lock runs on, which an exec: lock, naming none, must be given.
	Service cluster.Service
}

// Table is the comparison: what `check compare` prints and saves.
type Table struct {
	Classes  []Class     `json:"classes"`
	Rows     []RowResult `json:"rows"`
	Left     []string    `json:"left_out,omitempty"` // rows whose lock this build lacks
	Families []Family    `json:"families"`
	Seconds  float64     `json:"seconds"` // how long the runs took
	Runs     int         `json:"runs"`    // runs per cell
	// Varied lists the cells whose runs did not all give the same
	// outcome, as "lock × class".
	Varied []string `json:"varied,omitempty"`
}

// RowResult is one lock's row: a cell per class, and what its runs measured.
type RowResult struct {
	Lock string `json:"lock"`
	// Name is the name its runs are saved under: Lock, or for exec:COMMAND
	// the program's name (exec-…).
	Name   string `json:"name"`
	Title  string `json:"title"`
	Family string `json:"family"`
	Own    bool   `json:"own,omitempty"` // the user's lock (-lock)
	Cells  []Cell `json:"cells"`
	// PerSec is critical sections (acquire, work, release) per second
	// outside the faults, over every run of every cell of the row that
	// took place; 0 when none did.
	PerSec float64 `json:"sections_per_sec"`
	// HandoverMS is the median of the same runs' median handovers; nil
	// when no run measured one.
	HandoverMS *float64 `json:"handover_median_ms"`
	// Measured says which runs PerSec and HandoverMS come from.
	Measured string `json:"measured,omitempty"`
}

// Cell is one lock under one fault class: the outcomes of its real runs,
// the worst first, or "—" with why there was none.
type Cell struct {
	Class    string `json:"class"`
	Scenario string `json:"scenario,omitempty"`
	// Text is the worst run's verdicts with their kinds ("ok", "lock
	// illegal (inherent)"), "spoiled" or "not made", followed, when
	// the cell has several runs, by how many gave it ("2/3"); or "—". A
	// run that could not start or failed midway is "not made", with why.
	Text string `json:"text"`
	// Verdict is the cell's colour: the worst verdict of its worst run,
	// unknown above ok; "" for "—".
	Verdict string `json:"verdict,omitempty"`
	// Word is what the compact grid shows of the worst run: its verdict,
	// or "spoiled" or "not made"; Kind is the kind of its failing
	// verdict (own, inherent, untold), "" when none failed.
	Word string `json:"word,omitempty"`
	Kind string `json:"kind,omitempty"`
	// Share is how many of the cell's runs gave the worst outcome: "2/3".
	Share string `json:"share,omitempty"`
	Why   string `json:"why,omitempty"` // for "—", or the worst run's: spoiled, skipped, a missed fault
	// Page is the worst run's page, relative to the report folder.
	Page string `json:"page,omitempty"`
	// Folder is the worst run's folder, relative to the report folder.
	Folder string `json:"folder,omitempty"`
	// Others are the outcomes of the other runs, worst first, each once
	// with its runs.
	Others []Outcome `json:"others,omitempty"`
	// Runs are every run of the cell, in order, with its verdicts.
	Runs []RunResult `json:"runs,omitempty"`
}

// Outcome is what some runs of a cell gave alike: their text, colour and
// runs, and the page of the first.
type Outcome struct {
	Text    string `json:"text"`
	Verdict string `json:"verdict"`
	Why     string `json:"why,omitempty"`
	Runs    []int  `json:"runs"`
	Share   string `json:"share"` // "1/3": how many of the cell's runs
	Page    string `json:"page,omitempty"`
	rank    []int  // the first run's, as RunResult's
}

// RunResult is one run of a cell: its number and seed, every checker's
// verdict and kind, and its outcome as a one-run cell would show it.
type RunResult struct {
	Run      int                        `json:"run"`
	Seed     int64                      `json:"seed"`
	Verdicts map[string]checker.Verdict `json:"verdicts,omitempty"`
	Kinds    map[string]checker.Kind    `json:"kinds,omitempty"`
	Text     string                     `json:"text"`
	Verdict  string                     `json:"verdict"`
	Why      string                     `json:"why,omitempty"`
	Page     string                     `json:"page,omitempty"`
	Word     string                     `json:"word"`
	Kind     string                     `json:"kind,omitempty"`
	// Alone is what the first try showed when the run was made again
	// alone (it was unsettled beside the others).
	Alone string `json:"alone,omitempty"`
	rank  []int  // how bad the run is: compared element by element
}

// None is the text of a cell that has no run.
const None = "—"

// plan is the rows and cells to run: every cell's scenario resolved, or
// its "—" reason given.
func plan(opts Options) ([]RowResult, []string, []suite.Pair, error) {
	classes, err := pick(Classes(), opts.Classes)
	if err != nil {
		return nil, nil, nil, err
	}
	rows, err := chosen(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	var out []RowResult
	var left []string
	var pairs []suite.Pair
	for _, r := range rows {
		l, err := locks.Lookup(r.Lock)
		if err == nil && r.File != "" {
			if _, serr := os.Stat(r.File); serr != nil {
				err = fmt.Errorf("%s is not here: run check compare from the repository's root", r.File)
			}
		}
		if err != nil {
			left = append(left, fmt.Sprintf("%s (%s): %v", r.Title, r.Lock, err))
			continue
		}
		rr := RowResult{Lock: r.Lock, Name: l.Name, Title: r.Title, Family: r.Family, Own: r.Own}
		for _, c := range classes {
			cell := r.cell(c.Name)
			for k := 1; cell.Scenario != "" && k <= max(opts.Runs, 1); k++ {
				pairs = append(pairs, suite.Pair{Lock: r.Lock, Scenario: cell.Scenario, Run: k})
			}
			rr.Cells = append(rr.Cells, cell)
		}
		out = append(out, rr)
	}
	return out, left, pairs, nil
}

// chosen is the rows opts asks for, in the families' order, each user's
// lock first in its family: the rows opts.Locks names; else, with locks
// of the user's, those and the references of their services; else every
// row.
func chosen(opts Options) ([]Row, error) {
	own, err := ownRows(opts.Own, opts.Service)
	if err != nil {
		return nil, err
	}
	services := map[cluster.Service]bool{}
	for _, r := range own {
		for _, t := range r.Topologies {
			services[t.Service()] = true
		}
	}
	var rows []Row
	switch {
	case opts.Locks != nil:
		for _, name := range opts.Locks {
			i := slices.IndexFunc(Rows, func(r Row) bool { return r.Lock == name })
			if i < 0 {
				return nil, fmt.Errorf("no row for lock %q in the comparison", name)
			}
			rows = append(rows, Rows[i])
		}
	case len(own) > 0:
		for _, r := range Rows {
			if slices.ContainsFunc(r.Topologies, func(t cluster.Topology) bool { return services[t.Service()] }) {
				rows = append(rows, r)
			}
		}
	default:
		rows = Rows
	}
	rows = append(own, slices.DeleteFunc(slices.Clone(rows), func(r Row) bool {
		return slices.ContainsFunc(own, func(o Row) bool { return o.Lock == r.Lock })
	})...)
	slices.SortStableFunc(rows, func(a, b Row) int { return familyIndex(a.Family) - familyIndex(b.Family) })
	return rows, nil
}

// ownRows are the rows of the user's locks names, on service (every
// service a lock runs on when ""), each in its service's family.
func ownRows(names []string, service cluster.Service) ([]Row, error) {
	var rows []Row
	for _, name := range names {
		l, err := locks.Lookup(name)
		if err != nil {
			return nil, err
		}
		if l.Program && service == "" {
			return nil, fmt.Errorf("lock %s: a program names no service; give -service (%s)", name, serviceNames())
		}
		var ts []cluster.Topology
		for _, t := range l.Topologies {
			if service == "" || t.Service() == service {
				ts = append(ts, t)
			}
		}
		if len(ts) == 0 {
			return nil, fmt.Errorf("lock %s does not run on service %q (%s)", name, service, serviceNames())
		}
		title := strings.TrimPrefix(name, "exec:")
		row := Row{Lock: name, Title: title, Family: familyOf[ts[0].Service()], Topologies: ts, Own: true}
		if l.Program {
			row.Why = map[string]string{Pool: programPoolWhy}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// serviceNames lists the services a user's lock can be given, for errors.
func serviceNames() string {
	var names []string
	for _, s := range cluster.Services() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// cell is r's cell for class, before its run: the scenario to run, or
// "—" and why.
func (r Row) cell(class string) Cell {
	if s := r.Scenarios[class]; s != "" {
		return Cell{Class: class, Scenario: s}
	}
	if why := r.Why[class]; why != "" {
		return Cell{Class: class, Text: None, Why: why}
	}
	for _, t := range r.Topologies {
		if s := scenarioFor[where{class, t}]; s != "" {
			return Cell{Class: class, Scenario: s}
		}
	}
	for _, t := range r.Topologies {
		if why := whyNot[where{class, t}]; why != "" {
			return Cell{Class: class, Text: None, Why: why}
		}
	}
	return Cell{Class: class, Text: None, Why: fmt.Sprintf("no scenario of this class on %s", topologyList(r.Topologies))}
}

// pick keeps the classes names, in the order of all; nil keeps every one.
func pick(all []Class, names []string) ([]Class, error) {
	if names == nil {
		return all, nil
	}
	var kept []Class
	for _, c := range all {
		if slices.Contains(names, c.Name) {
			kept = append(kept, c)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(all, func(c Class) bool { return c.Name == n }) {
			return nil, fmt.Errorf("unknown fault class %q (%s)", n, classNames())
		}
	}
	return kept, nil
}

func classNames() string {
	var names []string
	for _, c := range Classes() {
		names = append(names, c.Name)
	}
	return fmt.Sprint(names)
}

func topologyList(ts []cluster.Topology) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += " or "
		}
		s += "topology " + string(t)
	}
	return s
}

// Run makes the runs of the comparison with suite.Pairs, saves them as the
// suite saves any run, and returns the table. Bad rows or classes are
// refused before any run.
func Run(ctx context.Context, opts Options) (Table, error) {
	rows, left, pairs, err := plan(opts)
	if err != nil {
		return Table{}, err
	}
	classes, _ := pick(Classes(), opts.Classes)
	t := Table{Classes: classes, Left: left, Runs: max(opts.Runs, 1)}
	start := time.Now()
	var runs []reports.Run
	if len(pairs) > 0 {
		if runs, err = suite.Pairs(ctx, pairs, opts.Suite); err != nil {
			return Table{}, err
		}
	}
	t.Seconds = time.Since(start).Seconds()
	// The index draws the newest run of each lock and scenario; the
	// pages of a cell's other runs are drawn here.
	if err := reports.WriteRunPages(opts.Suite.Out, unpaged(runs)); err != nil {
		return Table{}, err
	}
	for i := range rows {
		fill(&rows[i], runs, opts)
		for _, c := range rows[i].Cells {
			if len(c.Others) > 0 {
				t.Varied = append(t.Varied, rows[i].Lock+" × "+c.Class)
			}
		}
	}
	t.Rows = rows
	t.Families = families(rows)
	return t, nil
}

// Validate refuses, before any run, rows or classes opts names that the
// comparison does not have.
func Validate(opts Options) error {
	_, _, _, err := plan(opts)
	return err
}
