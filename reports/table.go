package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locklab/locklab/check"
)

// WriteTable prints runs as the aligned table the CLI shows, one row per
// run and one column per checker, followed by a one-line summary. A verdict
// that differs from what the catalogue expects starts with "!".
func WriteTable(w io.Writer, runs []Run) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	header := append([]string{"pitfall", "variant", "scenario"}, check.Checkers...)
	header = append(header, "detect", "time", "as expected?")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range runs {
		row := []string{r.Pitfall, string(r.Variant), r.Scenario}
		for _, c := range check.Checkers {
			row = append(row, verdictCell(r, c))
		}
		row = append(row, detectText(r), durationText(r.DurationMS), asExpectedText(r))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	// tabwriter keeps the first write error and returns it here, so the
	// unchecked Fprintln calls above lose nothing.
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, summary(runs))
	return err
}

// WriteJSON prints runs as an indented JSON array, in the form of Run's
// JSON tags; this is what `check -json` prints.
func WriteJSON(w io.Writer, runs []Run) error {
	if runs == nil {
		runs = []Run{} // an empty array, not null, so readers can always range over it
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// The output is read by people and scripts, not embedded in HTML, so
	// "<" in a detail or path should stay readable.
	enc.SetEscapeHTML(false)
	return enc.Encode(runs)
}

// verdictCell is checker c's verdict in the table: "-" when the run has
// none, with a leading "!" when it is not what the catalogue expects.
func verdictCell(r Run, c string) string {
	got, ok := r.Verdicts[c]
	text := string(got)
	if !ok || got == "" {
		text = "-"
	}
	if want, judged := r.Expected[c]; judged && got != want {
		text = "!" + text
	}
	return text
}

// detectText is the time to the first violation, or "-" when none was seen.
func detectText(r Run) string {
	if r.DetectMS == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f ms", *r.DetectMS)
}

// durationText prints a run's length to the millisecond; finer digits are
// noise for runs that take seconds.
func durationText(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	return d.Round(time.Millisecond).String()
}

// asExpectedText is "yes", or "NO: " and every mismatch.
func asExpectedText(r Run) string {
	m := check.Mismatches(r.Expected, r.Verdicts)
	if len(m) == 0 {
		return "yes"
	}
	return "NO: " + strings.Join(m, "; ")
}

// summary is the line under the table and at the top of the HTML report:
// how many runs, and which of them did not turn out as expected.
func summary(runs []Run) string {
	var failed []string
	for _, r := range runs {
		if len(check.Mismatches(r.Expected, r.Verdicts)) > 0 {
			failed = append(failed, r.Pitfall+"/"+string(r.Variant))
		}
	}
	noun := "runs"
	if len(runs) == 1 {
		noun = "run"
	}
	if len(failed) == 0 {
		return fmt.Sprintf("%d %s, %d as expected", len(runs), noun, len(runs))
	}
	return fmt.Sprintf("%d %s, %d NOT as expected: %s", len(runs), noun, len(failed), strings.Join(failed, ", "))
}
