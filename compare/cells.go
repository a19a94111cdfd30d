package compare

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/reports"
)

// fill puts into row's cells the runs made for them, and measures the
// row's throughput and handover from those runs; out is the report folder
// the pages are linked from.
func fill(row *RowResult, runs []reports.Run, out string) {
	var sections int
	var outside time.Duration
	var handovers []time.Duration
	for i, c := range row.Cells {
		if c.Scenario == "" {
			continue
		}
		j := slices.IndexFunc(runs, func(r reports.Run) bool { return r.Lock == row.Lock && r.Scenario == c.Scenario })
		if j < 0 {
			row.Cells[i].Text, row.Cells[i].Why = None, "the run was not made"
			continue
		}
		r := runs[j]
		row.Cells[i] = cellOf(c, r, out)
		if r.Result == nil || r.Skipped != "" || len(r.NotExercised) > 0 {
			continue
		}
		st := r.Result.Stats
		// Outside the faults: what the lock does when nothing strikes it.
		sections += st.Before.Sections + st.After.Sections
		outside += st.Before.To - st.Before.From + st.After.To - st.After.From
		for _, ch := range r.Result.Checks {
			if ch.Checker == check.CheckHandover && ch.Median != nil {
				handovers = append(handovers, *ch.Median)
			}
		}
	}
	if outside > 0 {
		row.PerSec = float64(sections) / outside.Seconds()
	}
	if len(handovers) > 0 {
		slices.Sort(handovers)
		ms := float64(handovers[len(handovers)/2].Microseconds()) / 1000
		row.HandoverMS = &ms
	}
}

// cellOf is c filled from its run r.
func cellOf(c Cell, r reports.Run, out string) Cell {
	if rel, err := filepath.Rel(out, r.ReportDir); err == nil {
		c.Folder = filepath.ToSlash(rel)
		c.Page = c.Folder + "/" + reports.RunPageFile
	}
	switch {
	case r.Skipped != "":
		c.Text, c.Verdict, c.Why = "skipped", string(check.Unknown), r.Skipped
		return c
	case len(r.NotExercised) > 0:
		c.Text, c.Verdict, c.Why = "not exercised", string(check.Unknown), strings.Join(r.NotExercised, "; ")
		return c
	}
	var failing, unknown []string
	c.Verdict = string(check.OK)
	for _, name := range check.Checkers {
		v := r.Verdicts[name]
		switch {
		case check.Failing(v):
			failing = append(failing, fmt.Sprintf("%s %s (%s)", name, v, kindOf(r, name)))
			if c.Verdict == string(check.OK) || c.Verdict == string(check.Unknown) {
				c.Verdict = string(v)
			}
		case v == check.Unknown:
			unknown = append(unknown, name+" unknown")
			if c.Verdict == string(check.OK) {
				c.Verdict = string(check.Unknown)
			}
		}
	}
	switch {
	case len(failing) > 0 && r.Verdicts[check.CheckResource] == check.OK:
		// What a fencing token or a guarded write buys: the lock was
		// broken, the data was not.
		c.Text = strings.Join(append(append(failing, unknown...), check.CheckResource+" ok"), ", ")
	case len(failing) > 0:
		c.Text = strings.Join(append(failing, unknown...), ", ")
	case len(unknown) > 0:
		c.Text = strings.Join(unknown, ", ")
	default:
		c.Text = "ok"
	}
	if len(r.Unmet) > 0 {
		// Its verdicts stand, but a pass is not a pass of the fault.
		c.Text += " (fault unmet)"
		c.Why = strings.Join(r.Unmet, "; ")
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
