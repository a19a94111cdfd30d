package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locklab/locklab/checker"
)

// WriteTable prints runs as the aligned tables the CLI shows, followed by a
// one-line summary. Catalogue cases come first, in one table with a row per
// case and a column per checker, where a verdict that differs from what the
// catalogue expects starts with "!". Lock runs follow, one table per lock
// with a row per scenario, whose last column names the failures that are
// the lock's own. A failing verdict shows its kind: "illegal (own)".
func WriteTable(w io.Writer, runs []Run) error {
	var cases []Run
	var byLock [][]Run // lock runs, grouped by lock in order of appearance
	for _, r := range runs {
		if r.Lock == "" {
			cases = append(cases, r)
			continue
		}
		i := slices.IndexFunc(byLock, func(g []Run) bool { return g[0].Lock == r.Lock })
		if i < 0 {
			byLock = append(byLock, nil)
			i = len(byLock) - 1
		}
		byLock[i] = append(byLock[i], r)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	// tabwriter keeps the first write error and returns it from Flush, so
	// the unchecked Fprint calls lose nothing.
	if len(cases) > 0 || len(byLock) == 0 {
		header := append([]string{"pitfall", "variant", "scenario"}, checker.Checkers...)
		header = append(header, "detect", "time", "as expected?")
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, r := range cases {
			row := []string{strings.TrimSpace(r.Entry.ID + " " + r.Pitfall), string(r.Variant), r.Scenario}
			for _, c := range checker.Checkers {
				row = append(row, verdictCell(r, c))
			}
			row = append(row, detectText(r), runDurationText(r), asExpectedText(r))
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	}
	for i, group := range byLock {
		if err := tw.Flush(); err != nil { // each lock's table is aligned on its own
			return err
		}
		if i > 0 || len(cases) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "lock %s\n", group[0].Lock)
		header := append([]string{"scenario"}, checker.Checkers...)
		header = append(header, "detect", "time", "own failures?")
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, r := range group {
			row := []string{r.Scenario}
			for _, c := range checker.Checkers {
				row = append(row, verdictCell(r, c))
			}
			row = append(row, detectText(r), runDurationText(r), ownFailuresText(r))
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	}
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
// none, with its kind when it has one, and with a leading "!" when it is not
// what the catalogue expects. A run that was skipped or spoiled has no
// verdict to hold against the catalogue, so it gets no "!"; its last column
// says why.
func verdictCell(r Run, c string) string {
	text := r.verdictText(c)
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

// ownFailuresText is the last column of a lock run: "none"; its failing
// verdicts that are not inherent; "unknown: " and the checkers that could
// not judge; "spoiled: " and what did not happen; or "skipped: " and
// why.
func ownFailuresText(r Run) string {
	switch r.status() {
	case skipped:
		return "skipped: " + r.Skipped
	case spoiled:
		return "spoiled: " + strings.Join(r.Spoiled, "; ")
	case ownFailure:
		return strings.Join(r.ownFailures(), ", ")
	case undecided:
		return "unknown: " + strings.Join(r.unknowns(), ", ")
	}
	return strings.Join(append([]string{"none"}, r.missedNotes()...), "; ")
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

// asExpectedText is "yes"; "NO: " and every mismatch; "spoiled: "
// and what did not happen; or "skipped: " and why.
func asExpectedText(r Run) string {
	switch r.status() {
	case skipped:
		return "skipped: " + r.Skipped
	case spoiled:
		return "spoiled: " + strings.Join(r.Spoiled, "; ")
	case notAsExpected:
		return "NO: " + strings.Join(checker.Mismatches(r.Expected, r.Verdicts), "; ")
	}
	return strings.Join(append([]string{"yes"}, r.missedNotes()...), "; ")
}

// Outcome says how r turned out, as the end of its progress line: one line
// with the run's length, then an indented line for each note (what did not
// happen, why its fault never struck).
func (r Run) Outcome() string {
	took := durationText(r.DurationMS)
	var lines []string
	notes := r.Lock != "" // a case's notes follow only "as expected"; a lock run's all but one
	switch r.status() {
	case skipped:
		lines = append(lines, "skipped: "+r.Skipped)
	case spoiled:
		lines = append(lines, fmt.Sprintf("spoiled (%s)", took))
		for _, why := range r.Spoiled {
			lines = append(lines, "    spoiled: "+why)
		}
	case notAsExpected:
		lines = append(lines, fmt.Sprintf("NOT as expected: %s (%s)", strings.Join(checker.Mismatches(r.Expected, r.Verdicts), "; "), took))
	case ownFailure:
		lines = append(lines, fmt.Sprintf("own failures: %s (%s)", strings.Join(r.ownFailures(), ", "), took))
	case undecided:
		lines = append(lines, fmt.Sprintf("unknown verdicts: %s (%s)", strings.Join(r.unknowns(), ", "), took))
	case asExpected:
		var inherent []string
		for _, c := range checker.Checkers {
			if r.Kinds[c] == checker.Inherent {
				inherent = append(inherent, c+" "+string(r.Verdicts[c]))
			}
		}
		switch {
		case r.Lock == "":
			lines, notes = append(lines, fmt.Sprintf("as expected (%s)", took)), true
		case len(inherent) > 0:
			lines, notes = append(lines, fmt.Sprintf("no own failures; inherent: %s (%s)", strings.Join(inherent, ", "), took)), false
		default:
			lines = append(lines, fmt.Sprintf("no own failures (%s)", took))
		}
	}
	if notes {
		for _, note := range r.missedNotes() {
			lines = append(lines, "    "+note)
		}
	}
	if r.Alone != "" {
		lines = append(lines, "    made again alone; in parallel it was "+r.Alone)
	}
	return strings.Join(lines, "\n") + "\n"
}

// missedNotes say, one each, why the fault r's scenario is about never
// struck its lock.
func (r Run) missedNotes() []string {
	var notes []string
	for _, why := range r.Missed {
		notes = append(notes, "missed: "+why)
	}
	return notes
}

// summary is the line under the table and at the top of the HTML report:
// how many runs, and which of them did not turn out as expected, had
// failures of the lock's own (not inherent), had checkers that could not
// judge, were spoiled or were skipped.
func summary(runs []Run) string {
	noun := "runs"
	if len(runs) == 1 {
		noun = "run"
	}
	var failed, own, unknown, spoiledRuns, skips []string
	lockRuns := 0
	for _, r := range runs {
		if r.Lock != "" {
			lockRuns++
		}
		switch r.status() {
		case notAsExpected:
			failed = append(failed, r.Name())
		case ownFailure:
			own = append(own, r.Name())
		case undecided:
			unknown = append(unknown, r.Name())
		case spoiled:
			spoiledRuns = append(spoiledRuns, r.Name())
		case skipped:
			skips = append(skips, r.Name())
		}
	}
	if len(failed)+len(own)+len(unknown)+len(spoiledRuns)+len(skips) == 0 {
		switch lockRuns {
		case 0:
			return fmt.Sprintf("%d %s, %d as expected", len(runs), noun, len(runs))
		case len(runs):
			return fmt.Sprintf("%d %s, no own failures", len(runs), noun)
		}
		return fmt.Sprintf("%d %s, %d as expected, no own failures", len(runs), noun, len(runs)-lockRuns)
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"NOT as expected", failed}, {"with own failures", own}, {"with unknown verdicts", unknown}, {"spoiled", spoiledRuns}, {"skipped", skips}} {
		if len(p.names) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s: %s", len(p.names), p.what, strings.Join(p.names, ", ")))
		}
	}
	return fmt.Sprintf("%d %s, %s", len(runs), noun, strings.Join(parts, "; "))
}

// LockPassed says whether a lock's runs (check -lock) found nothing wrong
// with the lock: no run failed by a verdict that is not inherent, and at
// least one run judged it. Runs that said nothing of the lock (spoiled,
// with an unknown verdict, or skipped: a fault that could not reach a
// program, a service that could not start) do not fail it; note then says
// how many there were, in one line, and why the lock did not pass when it
// did not.
func LockPassed(runs []Run) (passed bool, note string) {
	own, judged, silent := 0, 0, 0
	for _, r := range runs {
		switch r.status() {
		case ownFailure, notAsExpected:
			own++
			judged++
		case asExpected:
			judged++
		default:
			silent++
		}
	}
	switch {
	case own > 0:
		return false, ""
	case judged == 0:
		return false, fmt.Sprintf("no run judged the lock: all %d were spoiled, undecided or skipped", silent)
	case silent > 0:
		return true, fmt.Sprintf("no failure of the lock's own in %d judged runs; %d more said nothing of it (spoiled, undecided or skipped: their rows say why)", judged, silent)
	}
	return true, ""
}
