package reports

import (
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
)

func TestThroughputChart(t *testing.T) {
	span := func(from, to time.Duration, n int) checker.Span {
		return checker.Span{From: from, To: to, Sections: n, PerSec: float64(n) / (to - from).Seconds()}
	}
	s := time.Second
	for _, tc := range []struct {
		name  string
		stats checker.Stats
		bars  []string
	}{
		{"faults", checker.Stats{Before: span(0, s, 10), During: span(s, 2*s, 1), After: span(2*s, 3*s, 9)},
			[]string{"before faults", "during faults", "after faults"}},
		// A crash has no length: its "during" says nothing.
		{"crash", checker.Stats{Before: span(0, s, 10), During: checker.Span{From: s, To: s}, After: span(s, 3*s, 20)},
			[]string{"before faults", "after faults"}},
		{"no fault", checker.Stats{Before: span(0, 3*s, 30)}, []string{"whole run (no fault)"}},
	} {
		svg := string(throughputChart(tc.stats))
		var names []string
		for _, m := range regexp.MustCompile(`<text x="0" y="\d+">([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
			names = append(names, m[1])
		}
		if !slices.Equal(names, tc.bars) {
			t.Errorf("%s: bars %q, want %q", tc.name, names, tc.bars)
		}
		if tc.name == "faults" && !regexp.MustCompile(`1\.0/s: 1 section, 1000 ms–2000 ms`).MatchString(svg) {
			t.Errorf("%s: the during bar's label is missing from\n%s", tc.name, svg)
		}
	}
}
