package schedule

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/locklab/locklab/cluster"
)

// record, when set, writes testdata/replays.json from the schedules the
// code draws now. It was run once, before replays carried a format
// version, so that the file holds what the replays users already have
// meant then; running it again would only record whatever the code draws
// today and prove nothing. Add entries of a new version by hand-editing the
// recording cases below and the file, never by rewriting the old ones.
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
		})
	}
}
