package compare

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/reports"
)

// fill puts into row's cells the runs made for them, and measures the
// row's throughput and handover from those runs.
func fill(row *RowResult, runs []reports.Run, opts Options) {
	n, base := max(opts.Runs, 1), opts.Suite.Seed
	if base == 0 {
		base = 1 // as suite.Pairs
	}
	var sections, measured, cells int
	var outside time.Duration
	var handovers []time.Duration
	for i, c := range row.Cells {
		if c.Scenario == "" {
			continue
		}
		for k := 1; k <= n; k++ {
			j := slices.IndexFunc(runs, func(r reports.Run) bool {
				return r.Lock == row.Name && r.Scenario == c.Scenario && r.Seed == base+int64(k-1)
			})
			if j < 0 {
				c.Runs = append(c.Runs, RunResult{Run: k, Seed: base + int64(k-1), Text: "not made", Word: "not made",
					Verdict: string(checker.Unknown), Why: "the run was not made", rank: []int{rankOf(checker.Unknown)}})
				continue
			}
			r := runs[j]
			c.Runs = append(c.Runs, runOf(k, r, opts.Suite.Out))
			if r.Result == nil || r.Skipped != "" || len(r.Spoiled) > 0 {
				continue
			}
			measured++
			st := r.Result.Stats
			// Outside the faults: what the lock does when nothing strikes it.
			sections += st.Before.Sections + st.After.Sections
			outside += st.Before.To - st.Before.From + st.After.To - st.After.From
			for _, ch := range r.Result.Checks {
				if ch.Checker == checker.CheckHandover && ch.Median != nil {
					handovers = append(handovers, *ch.Median)
				}
			}
		}
		cells++
		row.Cells[i] = summarize(c)
	}
	if outside > 0 {
		row.PerSec = float64(sections) / outside.Seconds()
	}
	if len(handovers) > 0 {
		slices.Sort(handovers)
		ms := float64(handovers[len(handovers)/2].Microseconds()) / 1000
		row.HandoverMS = &ms
	}
	if measured > 0 {
		row.Measured = fmt.Sprintf("outside the faults of %d runs (%d cells × %d, those that took place)", measured, cells, n)
	}
}

// summarize makes c's text, colour and page those of its worst run, with
// how many of its runs gave the same, and lists the other outcomes.
func summarize(c Cell) Cell {
	var sorted []Outcome
	for _, r := range c.Runs {
		i := slices.IndexFunc(sorted, func(o Outcome) bool { return o.Text == r.Text })
		if i < 0 {
			sorted = append(sorted, Outcome{Text: r.Text, Verdict: r.Verdict, Why: r.Why, Page: r.Page, rank: r.rank})
			i = len(sorted) - 1
		}
		sorted[i].Runs = append(sorted[i].Runs, r.Run)
	}
	slices.SortStableFunc(sorted, func(a, b Outcome) int { return slices.Compare(b.rank, a.rank) })
	worst := sorted[0]
	c.Text, c.Verdict, c.Why, c.Page = worst.Text, worst.Verdict, worst.Why, worst.Page
	first := c.Runs[slices.IndexFunc(c.Runs, func(r RunResult) bool { return r.Run == worst.Runs[0] })]
	c.Word, c.Kind = first.Word, first.Kind
	c.Share = fmt.Sprintf("%d/%d", len(worst.Runs), len(c.Runs))
	if c.Page != "" {
		c.Folder = strings.TrimSuffix(c.Page, "/"+reports.RunPageFile)
	}
	if len(c.Runs) > 1 {
		c.Text += fmt.Sprintf(" %d/%d", len(worst.Runs), len(c.Runs))
	}
	for i := range sorted {
		sorted[i].Share = fmt.Sprintf("%d/%d", len(sorted[i].Runs), len(c.Runs))
	}
	c.Others = sorted[1:]
	return c
}

// Summary is c's text followed by its other outcomes, as the text table
// and the evidence under it show a cell: "lock illegal (inherent) 2/3; ok
// 1/3".
func (c Cell) Summary() string {
	s := c.Text
	for _, o := range c.Others {
		s += "; " + o.Text + " " + o.Share
	}
	return s
}

// runOf is run k of a cell, r, as the cell lists it; out is the report
// folder its page is linked from.
func runOf(k int, r reports.Run, out string) RunResult {
	one := cellOf(Cell{}, r, out)
	rr := RunResult{Run: k, Seed: r.Seed, Verdicts: r.Verdicts, Kinds: r.Kinds,
		Text: one.Text, Verdict: one.Verdict, Why: one.Why, Page: one.Page, Alone: r.Alone, Word: one.Word, Kind: one.Kind}
	rr.rank = []int{rankOf(checker.Verdict(one.Verdict))}
	if r.Skipped != "" || len(r.Spoiled) > 0 {
		return rr
	}
	var data, own, failing, unknown, missed int
	for _, name := range checker.Checkers {
		v := r.Verdicts[name]
		switch {
		case checker.Failing(v) && name == checker.CheckResource:
			data, failing = 1, failing+1
		case checker.Failing(v):
			failing++
		case v == checker.Unknown:
			unknown++
		}
		if checker.Failing(v) && r.Kinds[name] != checker.Inherent {
			own++
		}
	}
	if len(r.Missed) > 0 {
		missed = 1
	}
	// Worse first by the worst verdict, then by harm to the data, by
	// failures not inherent to the fault, and by how many failed or could
	// not tell.
	rr.rank = append(rr.rank, data, own, failing, unknown, missed)
	return rr
}

// rankOf orders verdicts from best to worst: a run that could not tell is
// worse than ok, better than any failure.
func rankOf(v checker.Verdict) int {
	return slices.Index([]checker.Verdict{checker.OK, checker.Unknown, checker.Slow, checker.Stuck, checker.Illegal}, v)
}

// cellOf is c filled from its run r.
func cellOf(c Cell, r reports.Run, out string) Cell {
	if rel, err := filepath.Rel(out, r.ReportDir); err == nil {
		c.Folder = filepath.ToSlash(rel)
		c.Page = c.Folder + "/" + reports.RunPageFile
	}
	switch {
	case r.Skipped != "":
		// It could not start, or failed midway: either way not made.
		c.Text, c.Verdict, c.Why = "not made", string(checker.Unknown), r.Skipped
		c.Word = c.Text
		return c
	case len(r.Spoiled) > 0:
		c.Text, c.Verdict, c.Why = "spoiled", string(checker.Unknown), strings.Join(r.Spoiled, "; ")
		c.Word = c.Text
		return c
	}
	var failing, unknown []string
	c.Verdict = string(checker.OK)
	for _, name := range checker.Checkers {
		v := r.Verdicts[name]
		switch {
		case checker.Failing(v):
			failing = append(failing, fmt.Sprintf("%s %s (%s)", name, v, kindOf(r, name)))
			if c.Verdict == string(checker.OK) || c.Verdict == string(checker.Unknown) {
				c.Verdict, c.Kind = string(v), kindOf(r, name)
			}
		case v == checker.Unknown:
			unknown = append(unknown, name+" unknown")
			if c.Verdict == string(checker.OK) {
				c.Verdict = string(checker.Unknown)
			}
		}
	}
	switch {
	case len(failing) > 0 && r.Verdicts[checker.CheckResource] == checker.OK:
		// What a fencing token or a guarded write buys: the lock was
		// broken, the data was not.
		c.Text = strings.Join(append(append(failing, unknown...), checker.CheckResource+" ok"), ", ")
	case len(failing) > 0:
		c.Text = strings.Join(append(failing, unknown...), ", ")
	case len(unknown) > 0:
		c.Text = strings.Join(unknown, ", ")
	default:
		c.Text = "ok"
	}
	c.Word = c.Verdict
	if len(r.Missed) > 0 {
		// Its verdicts stand, but a pass is not a pass of the fault.
		c.Text += " (missed)"
		c.Why = strings.Join(r.Missed, "; ")
	}
	return c
}

// kindOf is the kind of checker name's failing verdict on r: own,
// inherent, or untold.
func kindOf(r reports.Run, name string) string {
	if k := r.Kinds[name]; k != "" {
		return string(k)
	}
	return "untold"
}

// unpaged is the runs among runs whose folder has no run page yet; a run
// not made that left no folder has none to draw.
func unpaged(runs []reports.Run) []reports.Run {
	var out []reports.Run
	for _, r := range runs {
		if info, err := os.Stat(r.ReportDir); r.ReportDir == "" || err != nil || !info.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(r.ReportDir, reports.RunPageFile)); err != nil {
			out = append(out, r)
		}
	}
	return out
}
