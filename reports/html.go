package reports

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// IndexFile is the report page WriteIndex writes into its folder.
const IndexFile = "index.html"

//go:embed templates/index.html
var indexHTML string

// checksHTML defines the "checks" table that index.html and run.html share.
//
//go:embed templates/checks.html
var checksHTML string

// tmpl is parsed once; a parsed template is safe for concurrent use and
// never changes, so sharing it holds no mutable state.
var tmpl = template.Must(template.Must(template.New(IndexFile).Parse(indexHTML)).Parse(checksHTML))

// WriteIndex writes dir/index.html: a self-contained page showing runs
// (usually LoadRuns(dir), every run the folder holds). Catalogue cases get
// the catalogue's matrix and, per pitfall, what goes wrong, the fix and what
// each variant's run found; lock runs get, per lock, a matrix of scenarios
// by checkers and what each scenario's run found. Every failing verdict shows
// its kind, with why as its tooltip, and every run links its own files and
// its page, run.html, which WriteIndex writes into the run's folder: the
// run's timeline and, when it broke, the counterexample, drawn from its
// history.
func WriteIndex(dir string, runs []Run) error {
	stories := make([]runStory, len(runs))
	for i, r := range runs {
		stories[i] = readStory(r)
	}
	page := newPage(dir, runs, stories, time.Now())
	var errs []error
	for i, r := range runs {
		if info, err := os.Stat(r.ReportDir); err != nil || !info.IsDir() {
			continue // a run that never started has no folder
		}
		v := newVariant(dir, r, mismatchesOf(r), stories[i])
		errs = append(errs, writeRunPage(dir, r, v, stories[i]))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, page); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	// Written aside and renamed, so a reader never sees half a page.
	if err := writeFileAtomic(filepath.Join(dir, IndexFile), buf.Bytes()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// page is what the template shows. Everything is worked out here in Go so
// the template only lays it out.
type page struct {
	Date     string
	Summary  string
	AllPass  bool
	Checkers []string
	Width    int   // the matrix's columns
	Rows     []row // the catalogue's matrix
	Pitfalls []section
	Locks    []lockSection
	Compare  bool // the folder holds check compare's page
}

// row is one run in the matrix.
type row struct {
	// Family heads the rows of a family of locks: set on its first row.
	Family     pitfalls.Family
	Anchor     string // the id of the run's pitfall section
	Pitfall    string // id and name
	Variant    pitfalls.Variant
	Scenario   string
	Cells      []cell
	Detect     string
	Duration   string
	AsExpected bool
	Mismatches []string
	// Spoiled is what of the scenario did not happen; Skipped is why
	// the run could not start.
	Spoiled []string
	Missed  []string // why the scenario's own fault never came
	Skipped string
	Page    string // the run's page, when it has one
}

// cell is one checker's verdict in the matrix.
type cell struct {
	Verdict  string
	Class    string // picks the colour
	Expected bool   // the catalogue makes a claim about this checker
	Differs  bool   // and the verdict is not that claim
	Want     checker.Verdict
	Kind     string // of a failing verdict: own, inherent or untold
	KindWhy  string
}

// lockSection is one lock and its runs: a matrix of scenarios by checkers,
// then what each run found.
type lockSection struct {
	Anchor string
	Name   string
	About  string
	Group  string // broken, fix or library; "" for a lock the registry lacks
	Rows   []lockRow
	Runs   []variant
}

// lockRow is one scenario's run of a lock in its matrix.
type lockRow struct {
	Anchor   string // the id of the run's details
	Scenario string
	Topology string
	Cells    []cell
	Detect   string
	Duration string
	Status   string
	Class    string // colours Status
	Notes    []string
}

// section is one pitfall and the runs of its variants.
type section struct {
	// Family heads the sections of a family of locks: set on its first.
	Family   pitfalls.Family
	Anchor   string
	ID       string
	Name     string
	Title    string
	Wrong    string
	Fix      string
	Scenario string
	Variants []variant
}

// variant is what one run found: a variant of a pitfall, or a lock's run of
// one scenario.
type variant struct {
	Anchor     string
	Variant    pitfalls.Variant // "" for a lock run
	Scenario   string
	Status     string // as expected, NOT as expected, no own failures, …
	Class      string // colours Status
	Seed       int64
	Mismatches []string
	Spoiled    []string
	Missed     []string // why the scenario's own fault never came
	Skipped    string
	Alone      string // what the run showed in parallel, when it was made again alone
	HasResult  bool
	Checks     []checkView
	Faults     []string // in plain words with times, from the history when it can be read
	Page       string   // the run's page, run.html
	Sections   string   // "40 critical sections"
	Stats      checker.Stats
	Phases     []phase
	Links      []link
}

type checkView struct {
	Checker string
	Verdict string
	Class   string
	Detail  string
	At      string
	Kind    string // own, inherent or untold, as in the matrix
	KindWhy string
}

type phase struct {
	Name     string
	From, To string
	Sections int
	PerSec   string
}

type link struct {
	Name string
	Href string
}

func newPage(dir string, runs []Run, stories []runStory, now time.Time) page {
	p := page{
		Date:     now.Format("2006-01-02 15:04 MST"),
		Summary:  summary(runs),
		AllPass:  true,
		Checkers: checker.Checkers,
		Width:    len(checker.Checkers) + 6,
	}
	if _, err := os.Stat(filepath.Join(dir, ComparePage)); err == nil {
		p.Compare = true
	}
	// Runs arrive in order with every run of a pitfall or a lock together,
	// so a section is opened the first time its pitfall or lock shows up.
	pitfallAt, lockAt := map[string]int{}, map[string]int{}
	var family pitfalls.Family // of the last pitfall, to head each family once
	for i, r := range runs {
		if r.status() != asExpected {
			p.AllPass = false
		}
		mismatches := mismatchesOf(r)
		if r.Lock != "" {
			j, ok := lockAt[r.Lock]
			if !ok {
				j = len(p.Locks)
				lockAt[r.Lock] = j
				p.Locks = append(p.Locks, newLockSection(r))
			}
			s := &p.Locks[j]
			v := newVariant(dir, r, mismatches, stories[i])
			v.Anchor = fmt.Sprintf("%s-%s", s.Anchor, r.Scenario)
			s.Rows = append(s.Rows, newLockRow(r, v))
			s.Runs = append(s.Runs, v)
			continue
		}
		j, ok := pitfallAt[r.Pitfall]
		if !ok {
			j = len(p.Pitfalls)
			pitfallAt[r.Pitfall] = j
			p.Pitfalls = append(p.Pitfalls, newSection(r))
		}
		s := &p.Pitfalls[j]
		v := newVariant(dir, r, mismatches, stories[i])
		rw := newRow(r, s, mismatches, v.Page)
		if f := r.Entry.Family; f != family {
			// A run read back from JSON has no entry, and heads nothing.
			family, rw.Family = f, f
			if !ok {
				s.Family = f
			}
		}
		p.Rows = append(p.Rows, rw)
		s.Variants = append(s.Variants, v)
	}
	return p
}

func newLockSection(r Run) lockSection {
	s := lockSection{Anchor: "lock-" + r.Lock, Name: r.Lock}
	if e := r.LockEntry; e.Name != "" {
		s.About, s.Group = e.About, e.Group()
	}
	return s
}

func newLockRow(r Run, v variant) lockRow {
	lr := lockRow{Anchor: v.Anchor, Scenario: r.Scenario, Detect: detectText(r), Duration: runDurationText(r),
		Status: v.Status, Class: v.Class}
	if s, err := scenarios.Lookup(r.Scenario); err == nil {
		lr.Topology = string(s.Topology)
	}
	switch r.status() {
	case ownFailure:
		lr.Notes = r.ownFailures()
	case undecided:
		lr.Notes = []string{"unknown: " + strings.Join(r.unknowns(), ", ")}
	case spoiled:
		lr.Notes = r.Spoiled
	case skipped:
		lr.Notes = []string{r.Skipped}
	}
	lr.Notes = append(lr.Notes, r.missedNotes()...)
	for _, c := range checker.Checkers {
		lr.Cells = append(lr.Cells, newCell(r, c))
	}
	return lr
}

// newCell is checker c's verdict of r in a matrix, with its kind.
func newCell(r Run, c string) cell {
	got, ok := r.Verdicts[c]
	ce := cell{Verdict: string(got), Class: verdictClass(got), Kind: r.kindText(c), KindWhy: r.KindWhy[c]}
	if !ok || got == "" {
		ce.Verdict = "-"
	}
	return ce
}

func newSection(r Run) section {
	e := r.Entry
	s := section{Anchor: "pitfall-" + r.Pitfall, ID: e.ID, Name: r.Pitfall, Title: e.Title,
		Wrong: e.Wrong, Fix: e.Fix, Scenario: e.Scenario}
	// A run read back from JSON has no catalogue entry; the scenario the run
	// used is still known.
	if s.Scenario == "" {
		s.Scenario = r.Scenario
	}
	return s
}

// mismatchesOf is what went wrong with a catalogue case: its verdicts
// that differ from the catalogue's.
func mismatchesOf(r Run) []string {
	if r.Lock != "" {
		return r.ownFailures()
	}
	if r.status() == notAsExpected {
		return checker.Mismatches(r.Expected, r.Verdicts)
	}
	return nil
}

func newRow(r Run, s *section, mismatches []string, runPage string) row {
	name := r.Pitfall
	if s.ID != "" {
		name = fmt.Sprintf("%s %s", s.ID, r.Pitfall)
	}
	rw := row{Anchor: s.Anchor, Pitfall: name, Variant: r.Variant, Scenario: r.Scenario,
		Detect: detectText(r), Duration: runDurationText(r),
		AsExpected: r.status() == asExpected, Mismatches: mismatches,
		Spoiled: r.Spoiled, Missed: r.Missed, Skipped: r.Skipped, Page: runPage}
	for _, c := range checker.Checkers {
		ce := newCell(r, c)
		ce.Want, ce.Expected = r.Expected[c]
		ce.Differs = differs(r, c)
		rw.Cells = append(rw.Cells, ce)
	}
	return rw
}

// newVariant is what run r found; mismatches are the lines that say what
// went wrong: the catalogue's mismatches, or a lock run's own failures.
func newVariant(dir string, r Run, mismatches []string, st runStory) variant {
	v := variant{Variant: r.Variant, Scenario: r.Scenario, Seed: r.Seed, Mismatches: mismatches,
		Spoiled: r.Spoiled, Missed: r.Missed, Skipped: r.Skipped, Alone: r.Alone, Links: runLinks(dir, r.ReportDir)}
	v.Status, v.Class = statusText(r)
	if info, err := os.Stat(r.ReportDir); err == nil && info.IsDir() {
		v.Page = path.Join(relativeTo(dir, r.ReportDir), RunPageFile)
	}
	if r.Result == nil {
		return v
	}
	res := r.Result
	v.HasResult = true
	// The history says when each fault struck and for how long; the
	// scenario's labels only say what was planned.
	v.Faults = res.Faults
	if st.err == nil {
		v.Faults = st.schedule
	}
	v.Stats = res.Stats
	v.Sections = plural(res.Stats.Sections, "critical section")
	for _, c := range res.Checks {
		cv := checkView{Checker: c.Checker, Verdict: string(c.Verdict), Class: verdictClass(c.Verdict), Detail: c.Detail,
			Kind: string(c.Kind), KindWhy: c.KindWhy}
		if cv.Kind == "" && checker.Failing(c.Verdict) && c.KindWhy != "" {
			cv.Kind = "untold"
		}
		if c.At != nil {
			cv.At = fmt.Sprintf("%.0f ms", float64(*c.At)/float64(time.Millisecond))
		}
		v.Checks = append(v.Checks, cv)
	}
	for _, ph := range []struct {
		name string
		p    checker.Span
	}{{"before faults", res.Stats.Before}, {"during faults", res.Stats.During}, {"after faults", res.Stats.After}} {
		// A run without faults is all "before"; empty stretches say nothing.
		if ph.p.To-ph.p.From <= 0 {
			continue
		}
		v.Phases = append(v.Phases, phase{Name: ph.name, From: roundMS(ph.p.From), To: roundMS(ph.p.To),
			Sections: ph.p.Sections, PerSec: fmt.Sprintf("%.1f", ph.p.PerSec)})
	}
	return v
}

// statusText is how r turned out, in words, and the class that colours
// them.
func statusText(r Run) (text, class string) {
	switch r.status() {
	case skipped:
		return "skipped", "skipped"
	case spoiled:
		return "spoiled", "no"
	case notAsExpected:
		return "NOT as expected", "no"
	case ownFailure:
		return "own failures", "no"
	case undecided:
		return "unknown verdicts", "no"
	}
	if r.Lock != "" {
		return "no own failures", "yes"
	}
	return "as expected", "yes"
}

// runLinks links the files a run wrote, relative to the report folder so the
// whole folder can be zipped and handed out. Files the run did not write
// (no visualization for a checker that had nothing to show) get no link.
func runLinks(dir, runDir string) []link {
	if runDir == "" {
		return nil
	}
	rel := relativeTo(dir, runDir)
	var links []link
	for _, name := range []string{runner.LockFile, runner.ResourceFile, runner.HistoryFile, runner.ResultFile} {
		if _, err := os.Stat(filepath.Join(runDir, name)); err != nil {
			continue
		}
		links = append(links, link{Name: name, Href: path.Join(rel, name)})
	}
	return links
}

// relativeTo is target as a forward-slash path relative to base. Both are made
// absolute first, because filepath.Rel cannot relate an absolute path to a
// relative one; if they still cannot be related (different Windows drives),
// the absolute path is the best link left.
func relativeTo(base, target string) string {
	absBase, err1 := filepath.Abs(base)
	absTarget, err2 := filepath.Abs(target)
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(target)
	}
	rel, err := filepath.Rel(absBase, absTarget)
	if err != nil {
		return filepath.ToSlash(absTarget)
	}
	return filepath.ToSlash(rel)
}

// verdictClass is the CSS class that colours a verdict; anything the page
// does not know is grey, like unknown.
func verdictClass(v checker.Verdict) string {
	switch v {
	case checker.OK, checker.Illegal, checker.Stuck, checker.Slow:
		return "v-" + string(v)
	}
	return "v-unknown"
}

func roundMS(d time.Duration) string { return d.Round(time.Millisecond).String() }

// plural is "1 critical section" or "n critical sections".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
