package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/pitfalls"
)

// IndexFile is the report page WriteIndex writes into its folder.
const IndexFile = "index.html"

//go:embed templates/index.html
var indexHTML string

// tmpl is parsed once; a parsed template is safe for concurrent use and
// never changes, so sharing it holds no mutable state.
var tmpl = template.Must(template.New(IndexFile).Parse(indexHTML))

// WriteIndex writes dir/index.html: a self-contained page with the matrix of
// runs (usually LoadRuns(dir), every run the folder holds) and, per pitfall, what goes wrong, the fix and what each variant's
// run found, with links to the run's own files.
func WriteIndex(dir string, runs []Run) error {
	page := newPage(dir, runs, time.Now())
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
	Rows     []row
	Pitfalls []section
}

// row is one run in the matrix.
type row struct {
	Anchor     string // the id of the run's pitfall section
	Pitfall    string // id and name
	Variant    pitfalls.Variant
	Scenario   string
	Cells      []cell
	Detect     string
	Duration   string
	AsExpected bool
	Mismatches []string
	// NotExercised is what of the scenario did not happen; Skipped is why
	// the run could not start.
	NotExercised []string
	Skipped      string
}

// cell is one checker's verdict in the matrix.
type cell struct {
	Verdict  string
	Class    string // picks the colour
	Expected bool   // the catalogue makes a claim about this checker
	Differs  bool   // and the verdict is not that claim
	Want     harness.Verdict
}

// section is one pitfall and the runs of its variants.
type section struct {
	Anchor   string
	ID       int
	Name     string
	Title    string
	Seed     string
	Wrong    string
	Fix      string
	Scenario string
	Variants []variant
}

// variant is what one run of a pitfall found.
type variant struct {
	Variant      pitfalls.Variant
	Scenario     string
	Seed         int64
	AsExpected   bool
	Mismatches   []string
	NotExercised []string
	Skipped      string
	HasResult    bool
	Checks       []checkView
	Faults       []string
	Stats        check.Stats
	Phases       []phase
	Links        []link
}

type checkView struct {
	Checker string
	Verdict string
	Class   string
	Detail  string
	At      string
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

func newPage(dir string, runs []Run, now time.Time) page {
	p := page{
		Date:     now.Format("2006-01-02 15:04 MST"),
		Summary:  summary(runs),
		AllPass:  true,
		Checkers: check.Checkers,
	}
	// Runs arrive in catalogue order with both variants of a pitfall, so a
	// section is opened the first time its pitfall shows up.
	index := map[string]int{}
	for _, r := range runs {
		var mismatches []string
		if r.status() == notAsExpected {
			mismatches = check.Mismatches(r.Expected, r.Verdicts)
		}
		if r.status() != asExpected {
			p.AllPass = false
		}
		i, ok := index[r.Pitfall]
		if !ok {
			i = len(p.Pitfalls)
			index[r.Pitfall] = i
			p.Pitfalls = append(p.Pitfalls, newSection(r))
		}
		s := &p.Pitfalls[i]
		p.Rows = append(p.Rows, newRow(r, s, mismatches))
		s.Variants = append(s.Variants, newVariant(dir, r, mismatches))
	}
	return p
}

func newSection(r Run) section {
	e := r.Entry
	s := section{Anchor: "pitfall-" + r.Pitfall, ID: e.ID, Name: r.Pitfall, Title: e.Title,
		Seed: e.Seed, Wrong: e.Wrong, Fix: e.Fix, Scenario: e.Scenario}
	// A run read back from JSON has no catalogue entry; the scenario the run
	// used is still known.
	if s.Scenario == "" {
		s.Scenario = r.Scenario
	}
	return s
}

func newRow(r Run, s *section, mismatches []string) row {
	name := r.Pitfall
	if s.ID != 0 {
		name = fmt.Sprintf("%d %s", s.ID, r.Pitfall)
	}
	rw := row{Anchor: s.Anchor, Pitfall: name, Variant: r.Variant, Scenario: r.Scenario,
		Detect: detectText(r), Duration: runDurationText(r),
		AsExpected: r.status() == asExpected, Mismatches: mismatches,
		NotExercised: r.NotExercised, Skipped: r.Skipped}
	for _, c := range check.Checkers {
		got, ok := r.Verdicts[c]
		ce := cell{Verdict: string(got), Class: verdictClass(got)}
		if !ok || got == "" {
			ce.Verdict = "-"
		}
		ce.Want, ce.Expected = r.Expected[c]
		ce.Differs = differs(r, c)
		rw.Cells = append(rw.Cells, ce)
	}
	return rw
}

func newVariant(dir string, r Run, mismatches []string) variant {
	v := variant{Variant: r.Variant, Scenario: r.Scenario, Seed: r.Seed,
		AsExpected: r.status() == asExpected, Mismatches: mismatches,
		NotExercised: r.NotExercised, Skipped: r.Skipped, Links: runLinks(dir, r.ReportDir)}
	if r.Result == nil {
		return v
	}
	res := r.Result
	v.HasResult = true
	v.Faults = res.Faults
	v.Stats = res.Stats
	for _, c := range res.Checks {
		cv := checkView{Checker: c.Checker, Verdict: string(c.Verdict), Class: verdictClass(c.Verdict), Detail: c.Detail}
		if c.At != nil {
			cv.At = fmt.Sprintf("%.0f ms", float64(*c.At)/float64(time.Millisecond))
		}
		v.Checks = append(v.Checks, cv)
	}
	for _, ph := range []struct {
		name string
		p    check.Span
	}{{"before faults", res.Stats.Before}, {"during faults", res.Stats.During}, {"after faults", res.Stats.After}} {
		v.Phases = append(v.Phases, phase{Name: ph.name, From: roundMS(ph.p.From), To: roundMS(ph.p.To),
			Sections: ph.p.Sections, PerSec: fmt.Sprintf("%.1f", ph.p.PerSec)})
	}
	return v
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
	for _, name := range []string{harness.LockFile, harness.ResourceFile, harness.HistoryFile, harness.ResultFile} {
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
func verdictClass(v harness.Verdict) string {
	switch v {
	case harness.OK, harness.Illegal, harness.Stuck, harness.Slow:
		return "v-" + string(v)
	}
	return "v-unknown"
}

func roundMS(d time.Duration) string { return d.Round(time.Millisecond).String() }
