package reports

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"path"
	"path/filepath"
	"slices"

	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/timeline"
)

// RunPageFile is the page of one run, written into the run's folder.
const RunPageFile = "run.html"

//go:embed templates/run.html
var runHTML string

// runTmpl is parsed once and never changes, like tmpl.
var runTmpl = template.Must(template.Must(template.New(RunPageFile).Parse(runHTML)).Parse(checksHTML))

// runPage is what templates/run.html shows: one run, worked out here so
// the template only lays it out.
type runPage struct {
	Title       string
	Meta        string // scenario, seed, length
	Index       string // the report's index, relative to the run's folder
	Description string
	Wrong, Fix  string // the pitfall's prose, for a catalogue case
	variant
	Lesson     string
	Sequence   template.HTML // the counterexample, for a run with a failing verdict
	Timeline   template.HTML
	Throughput template.HTML
	Porcupine  []link
	HistoryErr string // why there is no drawing
	Reference  string // how many times the reference lock ran, and its verdicts
	// Learned is what the lock's own requests showed of it (a program's
	// footprint), and Ambiguous why any of it could not be told.
	Learned   string
	Ambiguous []string
	// Timing is what the run's faults were timed against, when a lease
	// was given or the lock learns its own (runner.Timing): "timed against
	// the learned lease 1000 ms (from SET …): the scenario's 200 ms
	// stretched 5×".
	Timing string
}

// runStory is what a run's history adds to its report: the drawings and
// the schedule of faults in plain words.
type runStory struct {
	schedule   []string
	sequence   template.HTML
	timeline   template.HTML
	throughput template.HTML
	lesson     string
	learned    string   // the footprint the history's end records
	ambiguous  []string // why any of it could not be told
	err        error
}

// readStory reads r's history and draws it; a run without a readable
// history gets the error instead.
func readStory(r Run) runStory {
	if r.ReportDir == "" || r.Result == nil {
		return runStory{err: errors.New("no history was recorded for this run")}
	}
	ops, err := history.ReadFile(filepath.Join(r.ReportDir, runner.HistoryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return runStory{err: errors.New("no history was recorded for this run")}
	}
	if err != nil {
		return runStory{err: err}
	}
	checks := r.Result.Checks
	st := runStory{
		schedule:   timeline.Schedule(ops),
		timeline:   template.HTML(timeline.Draw(ops, checks)),
		throughput: template.HTML(throughputChart(r.Result.Stats)),
		lesson:     timeline.Lesson(ops, checks),
	}
	if seq, ok := timeline.Sequence(ops, checks); ok {
		st.sequence = template.HTML(seq)
	}
	if i := slices.IndexFunc(ops, func(op history.Op) bool { return op.Kind == history.KindEnd && op.End != nil }); i >= 0 {
		if fp := ops[i].End.Footprint; fp != nil && *fp != (footprint.Footprint{}) {
			st.learned = fp.String()
		}
		st.ambiguous = ops[i].End.Ambiguous
	}
	return st
}

// writeRunPage writes r's run.html into its folder; dir is the report
// folder, for the link back to the index.
func writeRunPage(dir string, r Run, v variant, st runStory) error {
	p := runPage{Index: path.Join(relativeTo(r.ReportDir, dir), IndexFile), variant: v,
		Lesson: st.lesson, Sequence: st.sequence,
		Timeline: st.timeline, Throughput: st.throughput, Reference: r.referenceText(),
		Learned: st.learned, Ambiguous: st.ambiguous}
	if r.Lock != "" {
		p.Title = fmt.Sprintf("lock %s in %s", r.Lock, r.Scenario)
	} else {
		p.Title = fmt.Sprintf("%s, %s", r.Pitfall, r.Variant)
		if r.Entry.ID != "" {
			p.Title = fmt.Sprintf("%s %s", r.Entry.ID, p.Title)
		}
		p.Wrong, p.Fix = r.Entry.Wrong, r.Entry.Fix
	}
	if r.Result != nil && r.Result.Timing != nil {
		p.Timing = r.Result.Timing.Text
	}
	p.Meta = fmt.Sprintf("scenario %s, seed %d", r.Scenario, r.Seed)
	if r.Skipped == "" {
		p.Meta += ", " + runDurationText(r)
	}
	if s, err := scenarios.Lookup(r.Scenario); err == nil {
		p.Description = s.Description
	}
	if st.err != nil {
		p.HistoryErr = st.err.Error()
	}
	for _, l := range v.Links {
		if l.Name == runner.LockFile || l.Name == runner.ResourceFile {
			p.Porcupine = append(p.Porcupine, link{Name: l.Name, Href: path.Base(l.Href)})
		}
	}
	var buf bytes.Buffer
	if err := runTmpl.Execute(&buf, p); err != nil {
		return fmt.Errorf("render %s of %s: %w", RunPageFile, r.Name(), err)
	}
	if err := writeFileAtomic(filepath.Join(r.ReportDir, RunPageFile), buf.Bytes()); err != nil {
		return fmt.Errorf("write %s of %s: %w", RunPageFile, r.Name(), err)
	}
	return nil
}
