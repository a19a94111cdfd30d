package compare

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locklab/locklab/reports"
)

// Files the comparison writes into the report folder.
const (
	PageFile = reports.ComparePage
	JSONFile = "compare.json"
)

//go:embed templates/compare.html
var pageHTML string

// pageTmpl is parsed once and never changes.
var pageTmpl = template.Must(template.New(PageFile).Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }}).Parse(pageHTML))

// WriteText prints t as a table: a row per lock, a column per class, then
// throughput and handover, and the families' text.
func WriteText(w io.Writer, t Table) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := []string{"LOCK"}
	for _, c := range t.Classes {
		head = append(head, strings.ToUpper(c.Name))
	}
	fmt.Fprintln(tw, strings.Join(append(head, "SECTIONS/S", "HANDOVER"), "\t"))
	for _, r := range t.Rows {
		line := []string{r.Lock}
		for _, c := range r.Cells {
			line = append(line, c.Summary())
		}
		fmt.Fprintln(tw, strings.Join(append(line, r.Throughput(), r.Handover()), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range t.Left {
		fmt.Fprintln(w, "left out:", l)
	}
	for _, f := range t.Families {
		fmt.Fprintf(w, "\n%s: gives up: %s\n  fix: %s\n", f.Name, f.GivesUp, f.Fix)
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "  - %s\n", e.Text)
		}
	}
	if len(t.Varied) > 0 {
		fmt.Fprintf(w, "\ncells whose runs differ: %s\n", strings.Join(t.Varied, ", "))
	}
	fmt.Fprintf(w, "\n%d runs per cell, worst first (k/N: how many gave it); SECTIONS/S and HANDOVER: outside the faults of every run of the row\n", t.Runs)
	fmt.Fprintf(w, "runs took %.0f s; a — cell has no scenario of its class (see %s for why)\n", t.Seconds, JSONFile)
	return nil
}

// Throughput is r's sections per second as the table shows it: "—" when
// no section was made outside the faults.
func (r RowResult) Throughput() string {
	if r.PerSec == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", r.PerSec)
}

// Handover is r's median handover as the table shows it: "—" when no run
// measured one.
func (r RowResult) Handover() string {
	if r.HandoverMS == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f ms", *r.HandoverMS)
}

// Save writes t into the report folder dir as compare.json and
// compare.html.
func Save(dir string, t Table) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if err := reports.WriteFile(filepath.Join(dir, JSONFile), append(b, '\n')); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	var buf bytes.Buffer
	p := viewOf(t, time.Now().UTC().Format("2006-01-02 15:04 MST"), reports.IndexFile)
	if err := pageTmpl.Execute(&buf, p); err != nil {
		return fmt.Errorf("compare: render %s: %w", PageFile, err)
	}
	if err := reports.WriteFile(filepath.Join(dir, PageFile), buf.Bytes()); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	return nil
}
