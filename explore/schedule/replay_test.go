package schedule

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/locklab/locklab/cluster"
)

// record, when set, rewrites testdata/replays.json from the schedules the
// code draws now. It was run once, at 0bb8f87, before replays carried a
// format version, so that the file holds what the replays users already
// have meant then. Running it again records whatever the code draws today
// and proves nothing: to record replays of a later version, add cases
// below, run it, and check with git diff that no old entry changed.
var record = flag.Bool("record", false, "rewrite testdata/replays.json from today's draws (see replay_test.go)")

// recordedFile holds the recorded replays.
var recordedFile = filepath.Join("testdata", "replays.json")

// recorded is one replay as recorded: the string a user would have, the
// topology and nesting it was drawn for, and the schedule it drew.
type recorded struct {
	Replay   string `json:"replay"`
	Topology string `json:"topology"`
	Nested   bool   `json:"nested,omitempty"`
	Plan     drawn  `json:"plan"`
}

// drawn is the part of a plan a replay must give again: the workload, and
// each fault's kind, clients, phases and times. A fault's What line is
// kept for the reader but not compared: it quotes fault.Fault's String,
// whose wording may change without changing the schedule.
type drawn struct {
	Workload string       `json:"workload"`
	Faults   []drawnFault `json:"faults"`
	Keep     []int        `json:"keep"` // null: every drawn fault; []: none
}

type drawnFault struct {
	Kind       string           `json:"kind"`
	What       string           `json:"what"`
	Failpoints []drawnFailpoint `json:"failpoints,omitempty"`
	Scheduled  []drawnScheduled `json:"scheduled,omitempty"`
	MinDur     string           `json:"min_duration,omitempty"`
}

type drawnFailpoint struct {
	Name   string `json:"name"`
	Client int    `json:"client"`
	Skip   int    `json:"skip"`
	Times  int    `json:"times"`
	Action string `json:"action"` // its kind
	For    string `json:"for"`
	Until  string `json:"until,omitempty"`
	Fault  string `json:"fault,omitempty"` // the injected fault's type
}

type drawnScheduled struct {
	At    string `json:"at"`
	For   string `json:"for"`
	Fault string `json:"fault"` // its type
}

// drawnOf is what p's replay must draw again.
func drawnOf(p Plan) drawn {
	w := p.Workload
	d := drawn{Workload: w.TTL.String() + " TTL, " + w.Work.String() + " work, " + w.Duration.String() + " run", Keep: p.Keep}
	for _, f := range p.Faults {
		df := drawnFault{Kind: f.Kind, What: f.What}
		if f.MinDuration != 0 {
			df.MinDur = f.MinDuration.String()
		}
		for _, fp := range f.Failpoints {
			x := drawnFailpoint{Name: fp.Name, Client: fp.Client, Skip: fp.Skip, Times: fp.Times,
				Action: string(fp.Action.Kind), For: fp.Action.For.String(), Until: fp.Action.Until}
			if fp.Action.Fault != nil {
				x.Fault = reflect.TypeOf(fp.Action.Fault).String()
			}
			df.Failpoints = append(df.Failpoints, x)
		}
		for _, s := range f.Scheduled {
			df.Scheduled = append(df.Scheduled, drawnScheduled{At: s.At.String(), For: s.For.String(), Fault: reflect.TypeOf(s.Fault).String()})
		}
		d.Faults = append(d.Faults, df)
	}
	return d
}

// withoutWhat is d with its faults' What lines blanked, for comparing.
func withoutWhat(d drawn) drawn {
	d.Faults = append([]drawnFault(nil), d.Faults...)
	for i := range d.Faults {
		d.Faults[i].What = ""
	}
	return d
}

// recordingCases are the replays the file records: a few seeds on every
// topology of the time, the seed docs/explore.md shows, and shrunk ones.
func recordingCases() []recorded {
	var cs []recorded
	for _, t := range []cluster.Topology{cluster.Single, cluster.Replicated, cluster.Redlock, cluster.MariaDBTopology, cluster.PostgresTopology, cluster.EtcdTopology, cluster.ZooKeeperTopology} {
		for _, r := range []string{"1", "2", "3", "42", "9", "615900884", "615900884:0", "77:"} {
			cs = append(cs, recorded{Replay: r, Topology: string(t)})
		}
	}
	cs = append(cs, recorded{Replay: "5", Topology: string(cluster.Single), Nested: true})
	return cs
}

// TestRecordedReplays checks that every replay recorded in testdata draws
// the schedule it drew when it was recorded.
func TestRecordedReplays(t *testing.T) {
	if *record {
		var out []recorded
		for _, c := range recordingCases() {
			r, err := ParseReplay(c.Replay)
			if err != nil {
				t.Fatal(err)
			}
			p, err := r.Plan(cluster.Topology(c.Topology), c.Nested)
			if err != nil {
				t.Fatalf("%s on %s: %v", c.Replay, c.Topology, err)
			}
			c.Plan = drawnOf(p)
			out = append(out, c)
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(recordedFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(recordedFile)
	if err != nil {
		t.Fatal(err)
	}
	var cases []recorded
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("%s: %v", recordedFile, err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s records no replay", recordedFile)
	}
	for _, c := range cases {
		t.Run(c.Topology+"/"+c.Replay, func(t *testing.T) {
			r, err := ParseReplay(c.Replay)
			if err != nil {
				t.Fatalf("ParseReplay(%q): %v", c.Replay, err)
			}
			p, err := r.Plan(cluster.Topology(c.Topology), c.Nested)
			if err != nil {
				t.Fatalf("replay %s on %s: %v", c.Replay, c.Topology, err)
			}
			if got, want := withoutWhat(drawnOf(p)), withoutWhat(c.Plan); !reflect.DeepEqual(got, want) {
				t.Errorf("replay %s on %s drew another schedule:\n got %+v\nwant %+v", c.Replay, c.Topology, got, want)
			}
			// Written again, it carries its version and draws the same.
			again, err := ParseReplay(p.Replay().String())
			if err != nil || again.Version != r.Version {
				t.Fatalf("replay %s written as %s: read back as version %d (%v), want %d", c.Replay, p.Replay(), again.Version, err, r.Version)
			}
			if q, err := again.Plan(cluster.Topology(c.Topology), c.Nested); err != nil || !reflect.DeepEqual(q, p) {
				t.Errorf("replay %s written as %s drew another plan (%v)", c.Replay, p.Replay(), err)
			}
		})
	}
}

// TestKindList checks the shape of the kind list that keeps replays
// stable: names unique, weights positive, and versions that only grow
// down the list, from 1 to ReplayVersion, so that a new kind was appended
// at the end with a version of its own.
func TestKindList(t *testing.T) {
	seen := map[string]bool{}
	for i, k := range allKinds {
		if seen[k.Name] {
			t.Errorf("kind %d, %s: named twice", i, k.Name)
		}
		seen[k.Name] = true
		if k.weight <= 0 || k.draw == nil {
			t.Errorf("kind %s: weight %d, draw %v; want a positive weight and a draw", k.Name, k.weight, k.draw != nil)
		}
		if k.since < 1 || k.since > ReplayVersion {
			t.Errorf("kind %s: since %d, want 1 to ReplayVersion %d: a new kind comes with since ReplayVersion+1 and ReplayVersion raised to match", k.Name, k.since, ReplayVersion)
		}
		if i > 0 && k.since < allKinds[i-1].since {
			t.Errorf("kind %s (since %d) follows %s (since %d): a new kind is appended at the end", k.Name, k.since, allKinds[i-1].Name, allKinds[i-1].since)
		}
	}
	if last := allKinds[len(allKinds)-1].since; last != ReplayVersion {
		t.Errorf("the newest kind is of version %d, ReplayVersion is %d: a version with no kind of its own draws as the one before it", last, ReplayVersion)
	}
}

// TestNewKindKeepsOldReplays adds a kind of the next version to a copy of
// the list, as the next engineer to add one will, and checks that every
// replay of today's version draws the same plan from the longer list,
// while the next version's draws change where the new kind is drawn: a
// draw that took no notice of versions would shift the old replays too.
func TestNewKindKeepsOldReplays(t *testing.T) {
	fake := func(d *drawer) Fault {
		c := d.client()
		return Fault{What: fmt.Sprintf("client %d meets the new kind", c)}
	}
	for _, tc := range []struct {
		name     string
		kind     Kind
		topology cluster.Topology
		// newDiffers: whether the next version's draws differ from
		// today's on the topology.
		newDiffers bool
	}{
		{"every topology, on single", Kind{Name: "new-everywhere"}, cluster.Single, true},
		{"every topology, on redlock", Kind{Name: "new-everywhere"}, cluster.Redlock, true},
		{"every topology, on postgres", Kind{Name: "new-everywhere"}, cluster.PostgresTopology, true},
		{"every topology, on zookeeper", Kind{Name: "new-everywhere"}, cluster.ZooKeeperTopology, true},
		{"Redis alone, on replicated", Kind{Name: "new-redis", Services: onlyRedis}, cluster.Replicated, true},
		{"Redis alone, on etcd", Kind{Name: "new-redis", Services: onlyRedis}, cluster.EtcdTopology, false},
		{"a new service's, on single", Kind{Name: "new-memcached", Services: []cluster.Service{"memcached"}}, cluster.Single, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			longer := append(slices.Clone(allKinds), kind{Kind: tc.kind, weight: 3, draw: fake, since: ReplayVersion + 1})
			changed := 0
			const seeds = 300
			for seed := int64(1); seed <= seeds; seed++ {
				today := Space{}.draw(allKinds, ReplayVersion, tc.topology, false, seed)
				if old := (Space{}).draw(longer, ReplayVersion, tc.topology, false, seed); !reflect.DeepEqual(old, today) {
					t.Fatalf("seed %d of version %d drew another plan once a kind of version %d was added:\n%s\n%s", seed, ReplayVersion, ReplayVersion+1, today, old)
				}
				next := Space{}.draw(longer, ReplayVersion+1, tc.topology, false, seed)
				next.Version = today.Version
				if !reflect.DeepEqual(next, today) {
					changed++
				}
			}
			if tc.newDiffers && changed < seeds/4 {
				t.Errorf("version %d redrew only %d of %d seeds: the new kind is not in play, so the test proves nothing", ReplayVersion+1, changed, seeds)
			}
			if !tc.newDiffers && changed != 0 {
				t.Errorf("version %d redrew %d of %d seeds, though the new kind is not drawn on %s", ReplayVersion+1, changed, seeds, tc.topology)
			}
		})
	}
}
