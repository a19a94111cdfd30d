package schedule

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
)

func TestScheduleDeterministic(t *testing.T) {
	for _, tc := range []struct {
		topology cluster.Topology
		nested   bool
	}{
		{cluster.Single, false},
		{cluster.Single, true},
		{cluster.Replicated, false},
		{cluster.Redlock, false},
	} {
		t.Run(string(tc.topology), func(t *testing.T) {
			distinct := map[string]bool{}
			for seed := int64(1); seed <= 200; seed++ {
				a, b := Draw(tc.topology, tc.nested, seed), Draw(tc.topology, tc.nested, seed)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("seed %d drew two plans:\n%s\n%s", seed, a, b)
				}
				if len(a.Faults) == 0 || len(a.Faults) > 3 {
					t.Errorf("seed %d drew %d faults, want 1 to 3", seed, len(a.Faults))
				}
				if a.Workload.Nested != tc.nested {
					t.Errorf("seed %d: nested workload %v, want %v", seed, a.Workload.Nested, tc.nested)
				}
				s := a.Scenario()
				if err := s.Validate(); err != nil {
					t.Errorf("seed %d: %v", seed, err)
				}
				for _, fp := range s.Failpoints {
					if !fp.Optional {
						t.Errorf("seed %d: failpoint %s is not optional", seed, fp)
					}
				}
				if s.Workload.Duration < s.MinDuration {
					t.Errorf("seed %d: workload of %s shorter than its story's %s", seed, s.Workload.Duration, s.MinDuration)
				}
				if n := strings.Count(a.String(), "crashes"); n > 1 {
					t.Errorf("seed %d drew %d crashes, want at most 1: %s", seed, n, a)
				}
				distinct[a.String()] = true
			}
			if len(distinct) < 190 {
				t.Errorf("200 seeds drew only %d distinct plans", len(distinct))
			}
		})
	}
}

// TestScheduleKinds checks that every kind a topology supports is drawn,
// and none it does not.
func TestScheduleKinds(t *testing.T) {
	for _, topology := range []cluster.Topology{cluster.Single, cluster.Replicated, cluster.Redlock, cluster.MariaDBTopology, cluster.PostgresTopology, cluster.EtcdTopology, cluster.ZooKeeperTopology} {
		t.Run(string(topology), func(t *testing.T) {
			drawn := map[string]bool{}
			for seed := int64(1); seed <= 500; seed++ {
				for _, f := range Draw(topology, false, seed).Faults {
					drawn[f.Kind] = true
				}
			}
			for _, k := range Kinds() {
				want := (k.Topologies == nil || slices.Contains(k.Topologies, topology)) &&
					(k.Services == nil || slices.Contains(k.Services, topology.Service()))
				if drawn[k.Name] != want {
					t.Errorf("kind %s drawn: %v, want %v", k.Name, drawn[k.Name], want)
				}
			}
		})
	}
}

// TestSpace checks that a space draws only its kinds, that a replay draws
// the same plan from the same space, and that an unknown kind is refused
// with the known ones listed.
func TestSpace(t *testing.T) {
	for _, tc := range []struct {
		faults []string
		want   func(kind string) bool
		text   string
	}{
		{nil, func(string) bool { return true }, "every kind"},
		{[]string{"-slow-work"}, func(k string) bool { return k != "slow-work" }, "every kind but slow-work"},
		{[]string{"slow-work,pause-holder"}, func(k string) bool { return k == "slow-work" || k == "pause-holder" }, "only slow-work, pause-holder"},
		{[]string{"crash", "crash-acquire"}, func(k string) bool { return k == "crash" || k == "crash-acquire" }, "only crash, crash-acquire"},
		{[]string{"slow-work", "pause-holder", "-pause-holder"}, func(k string) bool { return k == "slow-work" }, "only slow-work, pause-holder but pause-holder"},
	} {
		space, err := NewSpace(tc.faults)
		if err != nil {
			t.Fatalf("NewSpace(%q): %v", tc.faults, err)
		}
		if space.String() != tc.text {
			t.Errorf("NewSpace(%q) says %q, want %q", tc.faults, space, tc.text)
		}
		for seed := int64(1); seed <= 200; seed++ {
			p := space.Draw(cluster.Single, false, seed)
			if len(p.Faults) == 0 {
				t.Errorf("%s: seed %d drew no fault", space, seed)
			}
			for _, f := range p.Faults {
				if !tc.want(f.Kind) {
					t.Errorf("%s: seed %d drew %s", space, seed, f.Kind)
				}
			}
			again, err := (Replay{Seed: seed}).PlanIn(space, cluster.Single, false)
			if err != nil || !reflect.DeepEqual(again, p) {
				t.Errorf("%s: the replay of seed %d drew another plan (%v)", space, seed, err)
			}
		}
	}
	_, err := NewSpace([]string{"slow-work,bogus"})
	if err == nil || !strings.Contains(err.Error(), `"bogus"`) || !strings.Contains(err.Error(), "pause-holder") {
		t.Errorf("an unknown kind: error %v, want it named with the known kinds", err)
	}
	only, _ := NewSpace([]string{"failover"})
	if only.Check(cluster.Single) == nil || only.Check(cluster.Replicated) != nil {
		t.Errorf("a space of failovers alone: single refused %v, replicated refused %v", only.Check(cluster.Single), only.Check(cluster.Replicated))
	}
}

// TestReplayRoundTrip checks the text forms of a replay: with a version,
// and without one (before versions), read as version 1 and written with
// it.
func TestReplayRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		text   string
		want   Replay
		string string // its form as written
	}{
		{"42", Replay{Version: 1, Seed: 42}, "v1:42"},
		{"42:0,2", Replay{Version: 1, Seed: 42, Keep: []int{0, 2}}, "v1:42:0,2"},
		{"42:", Replay{Version: 1, Seed: 42, Keep: []int{}}, "v1:42:"},
		{"v1:42", Replay{Version: 1, Seed: 42}, "v1:42"},
		{"v1:615900884:0", Replay{Version: 1, Seed: 615900884, Keep: []int{0}}, "v1:615900884:0"},
		{"v1:42:", Replay{Version: 1, Seed: 42, Keep: []int{}}, "v1:42:"},
	} {
		got, err := ParseReplay(tc.text)
		if err != nil {
			t.Fatalf("ParseReplay(%q): %v", tc.text, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseReplay(%q) = %#v, want %#v", tc.text, got, tc.want)
		}
		if got.String() != tc.string {
			t.Errorf("ParseReplay(%q).String() = %q, want %q", tc.text, got.String(), tc.string)
		}
		if again, err := ParseReplay(got.String()); err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("ParseReplay(%q) = %#v, %v; want %#v", got.String(), again, err, got)
		}
	}
	if s := (Replay{Seed: 7}).String(); s != fmt.Sprintf("v%d:7", ReplayVersion) {
		t.Errorf("a replay of version 0 is written %q, want it of ReplayVersion %d", s, ReplayVersion)
	}
	next := fmt.Sprintf("v%d:42", ReplayVersion+1)
	for _, tc := range []struct{ text, err string }{
		{"", "positive integer"},
		{"x", "positive integer"},
		{"0", "positive integer"},
		{"-3", "positive integer"},
		{"1.5", "positive integer"},
		{"42:a", `fault index "a"`},
		{"42:1,,2", `fault index ""`},
		{"42:-1", `fault index "-1"`},
		{"v1:", "positive integer"},
		{"v1:0", "positive integer"},
		{"v1:42:x", `fault index "x"`},
		{"v1", "format version"},
		{"v:42", "format version"},
		{"vx:42", "format version"},
		{"v0:42", "format version"},
		{"v-1:42", "format version"},
		{"v01:42", "format version"},
		{"V1:42", "positive integer"},
		{next, fmt.Sprintf("unknown format version %d", ReplayVersion+1)},
	} {
		_, err := ParseReplay(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseReplay(%q): error %v, want one line with %q", tc.text, err, tc.err)
		}
	}
	p := Draw(cluster.Single, false, 42)
	if _, err := (Replay{Seed: 42, Keep: []int{len(p.Faults)}}).Plan(cluster.Single, false); err == nil {
		t.Errorf("a replay keeping fault %d of %d was accepted", len(p.Faults), len(p.Faults))
	}
	if _, err := (Replay{Version: ReplayVersion + 1, Seed: 42}).Plan(cluster.Single, false); err == nil {
		t.Errorf("a replay of version %d was planned", ReplayVersion+1)
	}
}

func TestKeeping(t *testing.T) {
	var p Plan
	for seed := int64(1); len(p.Faults) < 3; seed++ {
		p = Draw(cluster.Single, false, seed)
	}
	kept, err := p.Keeping([]int{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := kept.Kept(); len(got) != 2 || got[0].What != p.Faults[0].What || got[1].What != p.Faults[2].What {
		t.Errorf("kept %v", got)
	}
	if r := kept.Replay().String(); !strings.HasSuffix(r, ":0,2") {
		t.Errorf("replay %s, want it to keep 0 and 2", r)
	}
	none, _ := p.Keeping([]int{})
	if s := none.Scenario(); len(s.Failpoints)+len(s.Faults) != 0 {
		t.Errorf("a plan keeping nothing arms %d failpoints and %d faults", len(s.Failpoints), len(s.Faults))
	}
}
