package compare

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/scenarios"
)

// TestPlan: every cell of every row this build has is a scenario that
// exists, on a topology its lock runs on, or "—" with a reason; a reason
// the row gives wins over its topology's scenario.
func TestPlan(t *testing.T) {
	rows, _, pairs, err := plan(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || len(pairs) == 0 {
		t.Fatalf("%d rows, %d runs", len(rows), len(pairs))
	}
	for _, r := range rows {
		l, err := locks.Lookup(r.Lock)
		if err != nil {
			t.Fatal(err)
		}
		row := Rows[slices.IndexFunc(Rows, func(x Row) bool { return x.Lock == r.Lock })]
		for _, c := range r.Cells {
			if why := row.Why[c.Class]; why != "" && (c.Scenario != "" || c.Why != why) {
				t.Errorf("%s × %s: scenario %q, why %q; want — for the row's own reason", r.Lock, c.Class, c.Scenario, c.Why)
			}
			if c.Scenario == "" {
				if c.Text != None || c.Why == "" {
					t.Errorf("%s × %s: no scenario, text %q, why %q", r.Lock, c.Class, c.Text, c.Why)
				}
				continue
			}
			s, err := scenarios.Lookup(c.Scenario)
			if err != nil {
				t.Errorf("%s × %s: %v", r.Lock, c.Class, err)
				continue
			}
			if !l.Supports(s.Topology) {
				t.Errorf("%s × %s: scenario %s is on %s, where %s does not run", r.Lock, c.Class, s.Name, s.Topology, r.Lock)
			}
		}
	}
}

// TestPlanRefuses: an unknown row or class is refused before any run.
func TestPlanRefuses(t *testing.T) {
	for _, o := range []Options{{Locks: []string{"nope"}}, {Classes: []string{"nope"}}, {Locks: []string{""}}} {
		if err := Validate(o); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", o)
		}
	}
}
