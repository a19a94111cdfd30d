package compare

import (
	"fmt"
	"slices"
	"strings"
)

// view is what compare.html draws of a table: its rows by family, each
// cell with its note number or its hover text, and the "—" reasons once
// each, numbered as the cells cite them.
type view struct {
	Table
	Date   string
	Index  string
	Span   int // columns of the grid, for a family's heading row
	Groups []group
	Notes  []string // the "—" reasons; the cells cite note i+1
}

// group is one family's rows in the grid.
type group struct {
	Name string
	Rows []viewRow
}

// viewRow is a row of the grid.
type viewRow struct {
	RowResult
	Cells []viewCell
}

// viewCell is a cell of the grid: the cell, the note its "—" cites, and
// the text shown on hover.
type viewCell struct {
	Cell
	Note int
	Tip  string
}

// viewOf lays t out for the page.
func viewOf(t Table, date, index string) view {
	v := view{Table: t, Date: date, Index: index, Span: len(t.Classes) + 3}
	for _, r := range t.Rows {
		if len(v.Groups) == 0 || v.Groups[len(v.Groups)-1].Name != r.Family {
			v.Groups = append(v.Groups, group{Name: r.Family})
		}
		vr := viewRow{RowResult: r}
		for _, c := range r.Cells {
			vc := viewCell{Cell: c, Tip: tip(c)}
			if c.Text == None {
				i := slices.Index(v.Notes, c.Why)
				if i < 0 {
					v.Notes = append(v.Notes, c.Why)
					i = len(v.Notes) - 1
				}
				vc.Note = i + 1
			}
			vr.Cells = append(vr.Cells, vc)
		}
		g := &v.Groups[len(v.Groups)-1]
		g.Rows = append(g.Rows, vr)
	}
	return v
}

// tip is the text a cell shows on hover: its scenario, its outcomes with
// their share of the runs, and why, where a run had a reason.
func tip(c Cell) string {
	if c.Text == None {
		return c.Why
	}
	lines := []string{c.Scenario + ": " + c.Summary()}
	if c.Why != "" {
		lines = append(lines, c.Why)
	}
	for _, r := range c.Runs {
		line := fmt.Sprintf("run %d (seed %d): %s", r.Run, r.Seed, r.Text)
		if r.Why != "" && r.Why != c.Why {
			line += " — " + r.Why
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
