package explore

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore/schedule"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// reachSeeds is how many seeds the reachability test draws per topology.
const reachSeeds = 3000

// unreachable lists the catalogue's faults explore does not draw by design,
// by scenario and fault (as reach's String says it), with the reason.
var unreachable = map[string]string{
	"unlock-before-commit: slow-work (client) at before-commit, until another client reaches critical-section": "before-commit is a failpoint of the MariaDB " +
		"resource, which only the commit scenarios use to show pitfall 8; explore's resource is the Redis inventory, " +
		"and the resource is part of the workload the user judges, not a fault to draw",
	"commit-before-unlock: slow-work (client) at before-commit, until another client reaches critical-section": "as unlock-before-commit: a failpoint of the MariaDB resource",
}

// reach is what the reachability test compares of a fault: what it does,
// to what, where it strikes, and whether it lasts inside or past a lease.
// Its timing and exact durations may differ.
type reach struct {
	kind     string // the fault's kind (fault.Kinds), an action's too
	target   string // client, node, links to all lock nodes, links to some, replication link
	at       string // the failpoint, or "a drawn time" for a scheduled fault
	class    string // "inside a lease", "past a lease", "until another client reaches …", or "" when its duration does not matter
	together int    // how many such faults strike together, at one hit of one failpoint
}

func (r reach) String() string {
	s := r.kind
	if r.together > 1 {
		s = fmt.Sprintf("%s ×%d", s, r.together)
	}
	s = fmt.Sprintf("%s (%s) at %s", s, r.target, r.at)
	if r.class != "" {
		s += ", " + r.class
	}
	return s
}

// lease says whether d lasts inside or past a lease of ttl.
func lease(d, ttl time.Duration) string {
	if d < ttl {
		return "inside a lease"
	}
	return "past a lease"
}

// faultReach describes an injected or scheduled fault f that heals after
// heal. Its target is its kind's (fault.Kinds), told apart further where a
// fault names some nodes. The duration that decides its class is what the
// lock feels: a skew's or jump's amount, a latency's delay, otherwise how
// long it lasts.
func faultReach(f fault.Fault, heal, ttl time.Duration) reach {
	links := func(nodes []int) string {
		if len(nodes) > 0 {
			return "links to some lock nodes"
		}
		return "links to all lock nodes"
	}
	about := f.About()
	r := reach{kind: about.Name, target: string(about.Target), class: lease(heal, ttl)}
	if about.Target == fault.TargetLink {
		r.target = links(nil)
	}
	switch f := f.(type) {
	case fault.Partition:
		r.target = links(f.Nodes)
	case fault.Latency:
		r.target, r.class = links(f.Nodes), lease(f.Delay, ttl)
	case fault.DropConnection, fault.KillConnection:
		r.class = "" // a drop or a kill is over at once
	case fault.ClockSkew:
		r.class = lease(f.By, ttl)
	case fault.ClockJump:
		r.class = lease(f.By, ttl)
	case fault.ClockJumpServer:
		r.class = lease(f.By, ttl)
	case fault.KillNode:
		if f.KeepData {
			r.kind += " keeping its data"
		}
	case fault.CutReplication:
		r.target = "replication link"
	case fault.KillMaster:
		// What the lock feels is the promotion; the heal only brings the
		// old master back as a replica.
		r.class = ""
	}
	return r
}

// reaches describes every fault of a set of failpoints and scheduled
// faults, in a run whose lease is ttl.
func reaches(fps []failpoint.Point, scheduled []runner.ScheduledFault, ttl time.Duration) []reach {
	var rs []reach
	for _, sf := range scheduled {
		r := faultReach(sf.Fault, sf.For, ttl)
		r.at, r.together = "a drawn time", 1
		rs = append(rs, r)
	}
	for _, fp := range fps {
		r := reach{kind: fp.About().Name, target: "client", at: fp.Name}
		switch fp.Action.Kind {
		case failpoint.ActionFault:
			r = faultReach(fp.Action.Fault, fp.Action.For, ttl)
			r.at = fp.Name
		case failpoint.ActionHold:
			// Another user of the client's pool, until the client gets
			// somewhere.
			r.class = "until the client reaches " + fp.Action.Until
		case failpoint.ActionPause, failpoint.ActionSleep:
			r.class = lease(fp.Action.For, ttl)
			if fp.Action.Until != "" {
				// It lasts until another client gets somewhere; For only
				// bounds it.
				r.class = "until another client reaches " + fp.Action.Until
			}
		}
		// Faults of one kind armed at the same hit of the same failpoint
		// strike together, as two nodes paused at once.
		for _, other := range fps {
			if other.Name == fp.Name && other.Client == fp.Client && other.Skip == fp.Skip && other.Action.Kind == fp.Action.Kind &&
				reflect.TypeOf(other.Action.Fault) == reflect.TypeOf(fp.Action.Fault) {
				r.together++
			}
		}
		rs = append(rs, r)
	}
	return rs
}

// drawnReaches maps every fault that seeds 1 to reachSeeds draw on a
// topology, from space, to the first seed that draws it.
func drawnReaches(space schedule.Space, t cluster.Topology, nested bool) map[reach]int64 {
	drawn := map[reach]int64{}
	for seed := int64(reachSeeds); seed >= 1; seed-- {
		p := space.Draw(t, nested, seed)
		for _, f := range p.Faults {
			for _, r := range reaches(f.Failpoints, f.Scheduled, p.Workload.TTL) {
				drawn[r] = seed
			}
		}
	}
	return drawn
}

// catalogueScenarios are every directed scenario, those the catalogue's
// pitfalls and fixes name among them (each checked to exist).
func catalogueScenarios(t *testing.T) []runner.Scenario {
	t.Helper()
	for _, p := range pitfalls.Catalogue() {
		for _, c := range p.Cases() {
			if _, err := scenarios.Lookup(c.Scenario); err != nil {
				t.Errorf("pitfall %s: %v", p.Name, err)
			}
		}
	}
	return scenarios.All()
}

// unreached lists, as "scenario: fault", the catalogue's faults that space
// never draws, and the seed that draws each one it does.
func unreached(t *testing.T, space schedule.Space) (missing []string, found map[string]int64) {
	t.Helper()
	found = map[string]int64{}
	drawn := map[string]map[reach]int64{}
	for _, s := range catalogueScenarios(t) {
		key := fmt.Sprint(s.Topology, s.Workload.Nested)
		if drawn[key] == nil {
			drawn[key] = drawnReaches(space, s.Topology, s.Workload.Nested)
		}
		ttl := s.Workload.TTL
		if ttl == 0 {
			ttl = 300 * time.Millisecond // harness's default
		}
		for _, r := range reaches(s.Failpoints, s.Faults, ttl) {
			name := s.Name + ": " + r.String()
			if seed, ok := drawn[key][r]; ok {
				found[name] = seed
			} else if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
	}
	return missing, found
}

// TestReachCatalogue checks that explore's draws reach every fault of every
// directed scenario: for each, a seed whose schedule draws a fault of the
// same kind, on the same kind of target, at the same failpoint, inside or
// past a lease as the scenario's is. Those it cannot reach by design are
// listed in unreachable, with the reason.
func TestReachCatalogue(t *testing.T) {
	missing, found := unreached(t, schedule.Space{})
	for _, name := range missing {
		if why, ok := unreachable[name]; ok {
			t.Logf("not drawn by design: %s: %s", name, why)
			continue
		}
		t.Errorf("no seed of 1 to %d draws %s", reachSeeds, name)
	}
	for name := range unreachable {
		if seed, ok := found[name]; ok {
			t.Errorf("%s is listed as unreachable, but seed %d draws it", name, seed)
		} else if !slices.Contains(missing, name) {
			t.Errorf("%s is listed as unreachable, but no scenario has it", name)
		}
	}
	names := make([]string, 0, len(found))
	for name := range found {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Logf("seed %d draws %s", found[name], name)
	}
}

// TestReachEveryFaultKind checks that explore draws every kind of fault
// locklab has (fault.Kinds), on some topology: a new fault that explore
// never draws fails here until a kind of explore draws it.
func TestReachEveryFaultKind(t *testing.T) {
	drawn := map[string]bool{}
	for _, topo := range cluster.Topologies() {
		for r := range drawnReaches(schedule.Space{}, topo, false) {
			drawn[strings.TrimSuffix(r.kind, " keeping its data")] = true
		}
	}
	for _, k := range fault.Kinds() {
		if !drawn[k.Name] {
			t.Errorf("no seed of 1 to %d draws a fault of kind %q on any topology", reachSeeds, k.Name)
		}
	}
}

// TestKindsWhereTheyStrike checks the kinds' Services and Topologies
// (fault.Kinds) against the faults that really strike: every fault of
// every directed scenario, and every fault explore draws on each topology,
// is of a kind that says it can strike there.
func TestKindsWhereTheyStrike(t *testing.T) {
	kinds := map[string]fault.Kind{}
	for _, k := range fault.Kinds() {
		kinds[k.Name] = k
	}
	strikes := func(name string, topo cluster.Topology) bool {
		k, ok := kinds[strings.TrimSuffix(name, " keeping its data")]
		return ok && k.StrikesOn(topo)
	}
	for _, s := range catalogueScenarios(t) {
		for _, r := range reaches(s.Failpoints, s.Faults, time.Second) {
			if !strikes(r.kind, s.Topology) {
				t.Errorf("scenario %s on %s has a fault of kind %q, which says it cannot strike there", s.Name, s.Topology, r.kind)
			}
		}
	}
	for _, topo := range cluster.Topologies() {
		for r, seed := range drawnReaches(schedule.Space{}, topo, false) {
			if !strikes(r.kind, topo) {
				t.Errorf("seed %d draws a fault of kind %q on %s, which says it cannot strike there", seed, r.kind, topo)
			}
		}
	}
}

// TestReachFailsWithoutKind checks that the reachability test can fail: a
// space without the kind that alone draws a scenario's fault misses it.
func TestReachFailsWithoutKind(t *testing.T) {
	for _, tc := range []struct {
		out  string
		miss string
	}{
		{"crash-acquire", "crash-after-setnx: crash (client) at " + failpoint.AfterTook},
		{"cut-holder", "holder-cut-off: partition (links to all lock nodes) at acquired, past a lease"},
		{"slow-nodes", "redlock-slow-nodes: pause-node ×2 (node) at " + failpoint.AfterTook + ", past a lease"},
		{"failover", "failover-wait: prefer-replica (node) at a drawn time, past a lease"},
	} {
		space, err := schedule.NewSpace([]string{"-" + tc.out})
		if err != nil {
			t.Fatal(err)
		}
		missing, _ := unreached(t, space)
		if !slices.Contains(missing, tc.miss) {
			t.Errorf("without %s, explore still reaches %q; missing: %q", tc.out, tc.miss, missing)
		}
	}
}

// TestWatchdogSurvivesCutRenewal runs a cut-renewal schedule: the lock
// without renewal loses its lease in the slow section, while the
// catalogue's watchdog, which renews on after a failed renewal, keeps it.
func TestWatchdogSurvivesCutRenewal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	space, err := schedule.NewSpace([]string{"cut-renewal"})
	if err != nil {
		t.Fatal(err)
	}
	p := space.Draw(cluster.Single, false, 1)
	for _, tc := range []struct {
		lock string
		want checker.Verdict
	}{
		{"token-watchdog", checker.OK},
		{"no-renewal", checker.Illegal},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			l, err := locks.Lookup(tc.lock)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			res, err := runner.Run(context.Background(), p.Scenario(), l.New, runner.Options{Seed: p.Seed, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			ops, err := history.ReadFile(filepath.Join(dir, runner.HistoryFile))
			if err != nil {
				t.Fatal(err)
			}
			cut := slices.ContainsFunc(ops, func(op history.Op) bool {
				return op.Kind == history.KindFault && strings.HasPrefix(op.Fault, "partition")
			})
			if cut != (tc.lock == "token-watchdog") {
				t.Errorf("%s: a renewal was cut: %v, want it only for the lock that renews", tc.lock, cut)
			}
			if got := res.Verdicts[checker.CheckLock]; got != tc.want {
				t.Errorf("%s under %s: lock checker says %s, want %s", tc.lock, p, got, tc.want)
			}
		})
	}
}
