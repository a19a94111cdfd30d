package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/pitfalls"
)

// TestReadmeTable: the README's "What make check shows" is the output of
// one `make check` (scripts/readme-table.sh writes it there): a row per
// run the catalogue makes, in its order, each as expected and with the
// verdicts the catalogue expects of it, and the count of runs below it
// and in the sentence that times it.
func TestReadmeTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)## What `make check` shows\n\n```\n(.*?)```\n").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no block of make check's output under \"## What `make check` shows\"")
	}
	lines := strings.Split(strings.TrimSpace(string(block[1])), "\n")
	header := strings.Fields(lines[0])
	var rows []string
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 3 && !strings.HasSuffix(l, "as expected") && !strings.HasPrefix(l, "report:") {
			rows = append(rows, l)
		}
	}
	var want []string
	var cases []pitfalls.Case
	for _, p := range pitfalls.Catalogue() {
		for _, c := range p.Cases() {
			want = append(want, fmt.Sprintf("%s %s %s %s", p.ID, p.Name, c.Variant, c.Scenario))
			cases = append(cases, c)
		}
	}
	if len(rows) != len(want) {
		t.Errorf("the README's table has %d runs; make check makes %d (run scripts/readme-table.sh)", len(rows), len(want))
	}
	column := map[string]int{}
	for i, h := range header {
		column[h] = i
	}
	for i := 0; i < len(rows) && i < len(want); i++ {
		f := strings.Fields(rows[i])
		if got := strings.Join(f[:4], " "); got != want[i] {
			t.Errorf("row %d is %q; make check's run %d is %q", i+1, got, i+1, want[i])
			continue
		}
		if !asExpected.MatchString(rows[i]) {
			t.Errorf("row %d (%s) is not as expected", i+1, want[i])
		}
		// The verdicts follow the four words, one or two words each.
		verdicts := regexp.MustCompile(`(ok|illegal|stuck|slow|unknown)( \((own|inherent|untold)\))?`).FindAllString(strings.Join(f[4:], " "), 4)
		for checkerName, v := range cases[i].Expected {
			j := column[checkerName] - 3 // the pitfall column holds two words, the header one
			if j < 0 || j >= len(verdicts) || !strings.HasPrefix(verdicts[j], string(v)) {
				t.Errorf("row %d (%s): %s is not %s", i+1, want[i], checkerName, v)
			}
		}
		if cases[i].Expected == nil && anyFails(verdicts) {
			t.Errorf("row %d (%s): a fix with a failing verdict %v", i+1, want[i], verdicts)
		}
	}
	summary := fmt.Sprintf("\n%d runs, %d as expected\n", len(want), len(want))
	if !strings.Contains(string(block[1]), summary) {
		t.Errorf("the README's table does not end with %q", strings.TrimSpace(summary))
	}
	if !regexp.MustCompile(fmt.Sprintf(`\n%d runs in [0-9.]+ s\.`, len(want))).Match(readme) {
		t.Errorf("the sentence timing the catalogue does not say %d runs", len(want))
	}
}

// asExpected is a row's end when its run was as expected: its time, then
// yes.
var asExpected = regexp.MustCompile(`[0-9]s +yes`)

// anyFails reports whether a verdict of vs fails.
func anyFails(vs []string) bool {
	for _, v := range vs {
		if !strings.HasPrefix(v, string(checker.OK)) {
			return true
		}
	}
	return false
}
