package compare

import (
	"github.com/locklab/locklab/cluster"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/fault"
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

// TestClassesAreFaultClasses checks the columns against fault's classes:
// every class a kind of fault names is a column, and the columns are the
// ones the comparison had, headed as before, when they were kept here.
func TestClassesAreFaultClasses(t *testing.T) {
	columns := Classes()
	for _, k := range fault.Kinds() {
		if k.Class != "" && !slices.ContainsFunc(columns, func(c Class) bool { return c.Name == string(k.Class) }) {
			t.Errorf("kind %s is of class %q, which is no column", k.Name, k.Class)
		}
	}
	want := []Class{
		{Pause, "holder paused past its lease"},
		{CutOff, "holder cut off"},
		{Failover, "lock node killed / failover"},
		{ClockJump, "clock jump"},
		{LostReply, "lost reply"},
		{Pool, "waiters on a small pool"},
	}
	if !slices.Equal(columns, want) {
		t.Errorf("Classes() = %q\nwant %q", columns, want)
	}
}

// TestClassScenarios checks each scenario the plan runs for a class, on a
// topology or for one lock, against the kinds of fault: it strikes a fault
// of that class (fault.Kind.Class), or, for the small pool, shares one
// pool among its clients, which is that class's fault without any
// injected one.
func TestClassScenarios(t *testing.T) {
	check := func(class, name, where string) {
		s, err := scenarios.Lookup(name)
		if err != nil {
			t.Errorf("%s × %s: %v", where, class, err)
			return
		}
		var classes []string
		for _, fp := range s.Failpoints {
			classes = append(classes, string(fp.About().Class))
		}
		for _, f := range s.Faults {
			classes = append(classes, string(f.Fault.About().Class))
		}
		if !slices.Contains(classes, class) && !(class == Pool && s.Workload.Pool > 0) {
			t.Errorf("%s × %s: scenario %s strikes faults of classes %q, none of class %s", where, class, name, classes, class)
		}
	}
	for w, name := range scenarioFor {
		check(w.class, name, "topology "+string(w.topology))
	}
	for _, r := range Rows {
		for class, name := range r.Scenarios {
			check(class, name, "lock "+r.Lock)
		}
	}
}

// TestOwnRows: a user's lock (-lock) is a row of its own, first in its
// service's family, beside the references of its service and no others;
// its runs are found under the name they are saved with. A program names
// no service, so it needs one.
func TestOwnRows(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		family  string
		runName string
		service cluster.Service
		err     bool
	}{
		{"program on mariadb", Options{Own: []string{"exec:/bin/sh lock.sh"}, Service: cluster.MariaDB}, Database, "exec-bin-sh-lock.sh", cluster.MariaDB, false},
		{"catalogue lock", Options{Own: []string{"token"}}, Redis, "token", cluster.Redis, false},
		{"program without a service", Options{Own: []string{"exec:/bin/sh lock.sh"}}, "", "", "", true},
		{"lock off its service", Options{Own: []string{"redlock"}, Service: cluster.MariaDB}, "", "", "", true},
	} {
		rows, _, _, err := plan(tc.opts)
		if tc.err {
			if err == nil {
				t.Errorf("%s: no error", tc.name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		own := slices.IndexFunc(rows, func(r RowResult) bool { return r.Own })
		if own < 0 || rows[own].Lock != tc.opts.Own[0] || rows[own].Name != tc.runName || rows[own].Family != tc.family {
			t.Errorf("%s: own row %d of %+v; want %s, saved as %s, in family %s", tc.name, own, rows, tc.opts.Own[0], tc.runName, tc.family)
			continue
		}
		if own > 0 && rows[own-1].Family == tc.family {
			t.Errorf("%s: own row after %s of its family; want it first", tc.name, rows[own-1].Lock)
		}
		refs := 0
		for _, r := range rows {
			if r.Own {
				continue
			}
			refs++
			row := Rows[slices.IndexFunc(Rows, func(x Row) bool { return x.Lock == r.Lock })]
			if !slices.ContainsFunc(row.Topologies, func(t cluster.Topology) bool { return t.Service() == tc.service }) {
				t.Errorf("%s: reference %s is not on service %s", tc.name, r.Lock, tc.service)
			}
		}
		if refs == 0 {
			t.Errorf("%s: no reference beside it", tc.name)
		}
	}
}

// TestFewDashes: every "—" of the comparison is a class that cannot apply
// to its row, saying why, and the locks the page began with (the rows that
// are no program and no library) have at most ten.
func TestFewDashes(t *testing.T) {
	dashes := 0
	for _, r := range Rows {
		l, err := locks.Lookup(r.Lock)
		library := err == nil && l.Group() == locks.GroupLibrary
		for _, c := range Classes() {
			cell := r.cell(c.Name)
			if cell.Scenario != "" {
				continue
			}
			if cell.Why == "" || strings.HasPrefix(cell.Why, "not built") {
				t.Errorf("%s × %s: %q, want why the class cannot apply", r.Lock, c.Name, cell.Why)
			}
			if r.File == "" && !library {
				dashes++
			}
		}
	}
	if dashes > 10 {
		t.Errorf("%d cells of the locks' rows are \"—\", want at most 10", dashes)
	}
}
