package compare

import (
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/reports"
)

// TestSummarize: a cell shows its worst run with how many gave it and
// lists the others; a run that could not tell is worse than ok, so a cell
// with one never reads ok.
func TestSummarize(t *testing.T) {
	ok := map[string]checker.Verdict{checker.CheckLock: checker.OK, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK}
	lost := map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal, checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK}
	inherent := map[string]checker.Kind{checker.CheckLock: checker.Inherent, checker.CheckResource: checker.Inherent}
	run := func(dir string, v map[string]checker.Verdict, k map[string]checker.Kind) reports.Run {
		return reports.Run{Lock: "l", Scenario: "s", Verdicts: v, Kinds: k, ReportDir: "/out/" + dir}
	}
	spoiled := run("x", nil, nil)
	spoiled.Spoiled = []string{"failpoint never fired"}
	for _, tc := range []struct {
		name         string
		runs         []reports.Run
		text, colour string
		others       []string
	}{
		{"one run", []reports.Run{run("a", ok, nil)}, "ok", "ok", nil},
		{"worst first", []reports.Run{run("a", ok, nil), run("b", lost, inherent), run("c", ok, nil)},
			"lock illegal (inherent), resource illegal (inherent) 1/3", "illegal", []string{"ok 2/3"}},
		{"unknown is not ok", []reports.Run{run("a", ok, nil), spoiled},
			"spoiled 1/2", "unknown", []string{"ok 1/2"}},
		{"all alike", []reports.Run{run("a", lost, inherent), run("b", lost, inherent)},
			"lock illegal (inherent), resource illegal (inherent) 2/2", "illegal", nil},
	} {
		c := Cell{Class: "c", Scenario: "s"}
		for i, r := range tc.runs {
			c.Runs = append(c.Runs, runOf(i+1, r, "/out"))
		}
		c = summarize(c)
		var others []string
		for _, o := range c.Others {
			others = append(others, o.Text+" "+o.Share)
		}
		if c.Text != tc.text || c.Verdict != tc.colour || len(others) != len(tc.others) {
			t.Errorf("%s: %q (%s), others %q; want %q (%s), others %q", tc.name, c.Text, c.Verdict, others, tc.text, tc.colour, tc.others)
			continue
		}
		for i := range others {
			if others[i] != tc.others[i] {
				t.Errorf("%s: others %q, want %q", tc.name, others, tc.others)
			}
		}
		if tc.colour == "illegal" && c.Page != "b/"+reports.RunPageFile && c.Page != "a/"+reports.RunPageFile {
			t.Errorf("%s: page %q, want the worst run's", tc.name, c.Page)
		}
	}
}
