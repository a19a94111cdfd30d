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
		row = append(row, detectText(r), runDurationText(r), asExpectedText(r))
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
// none, with a leading "!" when it is not what the catalogue expects. A run
// that was skipped or not exercised has no verdict to hold against the
// catalogue, so it gets no "!"; its last column says why.
func verdictCell(r Run, c string) string {
	got, ok := r.Verdicts[c]
	text := string(got)
	if !ok || got == "" {
		text = "-"
	}
	if differs(r, c) {
		text = "!" + text
	}
	return text
}

// differs reports whether checker c's verdict is not the one the catalogue
// expects of a run that took place.
func differs(r Run, c string) bool {
	want, judged := r.Expected[c]
	return judged && r.Verdicts[c] != want && r.status() == notAsExpected
}

// detectText is the time to the first violation, or "-" when none was seen.
func detectText(r Run) string {
	if r.DetectMS == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f ms", *r.DetectMS)
}

// runDurationText is how long a run took, or "-" for a run that never
// started.
func runDurationText(r Run) string {
	if r.Skipped != "" {
		return "-"
	}
	return durationText(r.DurationMS)
}

// durationText prints a run's length to the millisecond; finer digits are
// noise for runs that take seconds.
func durationText(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	return d.Round(time.Millisecond).String()
}

// asExpectedText is "yes"; "NO: " and every mismatch; "not exercised: "
// and what did not happen; or "skipped: " and why.
func asExpectedText(r Run) string {
	switch r.status() {
	case skipped:
		return "skipped: " + r.Skipped
	case notExercised:
		return "not exercised: " + strings.Join(r.NotExercised, "; ")
	case notAsExpected:
		return "NO: " + strings.Join(check.Mismatches(r.Expected, r.Verdicts), "; ")
	}
	return "yes"
}

// summary is the line under the table and at the top of the HTML report:
// how many runs, and which of them did not turn out as expected, were not
// exercised or were skipped.
func summary(runs []Run) string {
	noun := "runs"
	if len(runs) == 1 {
		noun = "run"
	}
	var failed, unexercised, skips []string
	for _, r := range runs {
		name := r.Pitfall + "/" + string(r.Variant)
		switch r.status() {
		case notAsExpected:
			failed = append(failed, name)
		case notExercised:
			unexercised = append(unexercised, name)
		case skipped:
			skips = append(skips, name)
		}
	}
	if len(failed)+len(unexercised)+len(skips) == 0 {
		return fmt.Sprintf("%d %s, %d as expected", len(runs), noun, len(runs))
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"NOT as expected", failed}, {"not exercised", unexercised}, {"skipped", skips}} {
		if len(p.names) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s: %s", len(p.names), p.what, strings.Join(p.names, ", ")))
		}
	}
	return fmt.Sprintf("%d %s, %s", len(runs), noun, strings.Join(parts, "; "))
}
