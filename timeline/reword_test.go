package timeline

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// misleading are labels that the drawings once parsed to decide a lane,
// a row or a story's words: a reworded fault takes one of them (or plain
// words), so that any reader still deciding from the text draws otherwise.
var misleading = []string{
	history.FaultFailover, history.FaultSlowWork, "client pause", "delayed command",
	"kill the master", "partition client 0 from lock nodes [7]", "lock node 9 restarted", "reworded",
}

// reworded is ops with every fault's and crash's label and detail
// replaced by unrelated text.
func reworded(ops []history.Op) []history.Op {
	out := make([]history.Op, len(ops))
	for i, op := range ops {
		if op.Kind == history.KindFault || op.Kind == history.KindCrash {
			op.Fault = misleading[i%len(misleading)]
			op.Detail = fmt.Sprintf("failpoint nodes [%d]: reworded detail", i)
		}
		out[i] = op
	}
	return out
}

// everyFaultHistory is a run struck by a fault of each shape the drawings
// tell apart: a client's own pause, slow work and delayed command, a
// partition, a dropped connection, a master's kill and its failover, a
// node's restart, a cut replication link, and an injection wait; two
// holders overlap.
func everyFaultHistory() []history.Op {
	const ms = time.Millisecond
	client := &history.Target{Type: history.TargetClient}
	fault := func(c int, call, ret time.Duration, kind string, part history.Part, t *history.Target, e history.Effect) history.Op {
		return history.Op{Client: c, Kind: history.KindFault, Call: call * ms, Return: ret * ms, FaultKind: kind, Part: part, Target: t, Effect: e,
			Fault: "label " + kind, Detail: "detail " + kind}
	}
	return []history.Op{
		{Client: 0, Kind: history.KindAcquire, Key: "lock", Call: 1 * ms, Return: 2 * ms, Outcome: models.OK},
		fault(0, 10, 400, "pause", "", client, history.EffectDelay),
		fault(1, 20, 60, "slow-work", "", client, history.EffectWork),
		fault(1, 70, 90, "command-delay", "", client, history.EffectDelay),
		fault(1, 95, 99, "kill-node", history.PartInjection, client, history.EffectHarness),
		fault(1, 100, 200, "partition", "", &history.Target{Type: history.TargetLink, Nodes: []int{3, 4}}, history.EffectStall),
		fault(0, 110, 111, "drop-connection", "", &history.Target{Type: history.TargetConnection, Nodes: []int{0}}, history.EffectStall),
		fault(-1, 120, 300, "kill-master", "", &history.Target{Type: history.TargetNode, Role: "master"}, history.EffectLoss),
		fault(-1, 120, 280, "kill-master", history.PartFailover, &history.Target{Type: history.TargetNode, Role: "master"}, history.EffectLoss),
		fault(-1, 130, 140, "kill-node", history.PartRestart, &history.Target{Type: history.TargetNode, Nodes: []int{2}}, history.EffectLoss),
		fault(-1, 150, 250, "cut-replication", "", &history.Target{Type: history.TargetLink, Nodes: []int{1, 2}}, history.EffectStage),
		fault(-1, 160, 170, "kill-leader", "", &history.Target{Type: history.TargetNode, Role: "leader"}, history.EffectStall),
		{Client: 1, Kind: history.KindAcquire, Key: "lock", Call: 300 * ms, Return: 301 * ms, Outcome: models.OK},
		{Client: 1, Kind: history.KindCrash, Call: 350 * ms, Return: 350 * ms, Failpoint: "critical-section", Detail: "failpoint critical-section"},
		{Client: 0, Kind: history.KindRelease, Key: "lock", Call: 410 * ms, Return: 411 * ms, Outcome: models.OK},
		{Client: -1, Kind: history.KindEnd, Call: 500 * ms, Return: 500 * ms, End: &history.End{Stock: 10, Initial: 10, TTL: 100 * ms, Probe: true}},
	}
}

// shape is what a scene decided, without any text: which lane or row
// each fault went to and when, the crashes, the nodes' holds, and the
// violations.
type shape struct {
	lanes   []string
	faults  map[string][][2]time.Duration
	hatched map[int][][2]time.Duration
	crashes []time.Duration
	holds   map[int][]nodeHold
	story   []Event
}

func shapeOf(ops []history.Op, checks []checker.Check) shape {
	s := newScene(ops, checks)
	sh := shape{lanes: s.lanes, faults: map[string][][2]time.Duration{}, hatched: map[int][][2]time.Duration{}, holds: map[int][]nodeHold{}}
	for lane, fs := range s.faults {
		for _, f := range fs {
			sh.faults[lane] = append(sh.faults[lane], [2]time.Duration{f.Call, f.Return})
		}
	}
	for c, fs := range s.hatched {
		for _, f := range fs {
			sh.hatched[c] = append(sh.hatched[c], [2]time.Duration{f.Call, f.Return})
		}
	}
	for _, c := range s.crashes {
		sh.crashes = append(sh.crashes, c.Call)
	}
	for n, hs := range s.nodeHolds {
		for _, h := range hs {
			h.ended = "" // a loss's is its fault's label
			sh.holds[n] = append(sh.holds[n], h)
		}
	}
	for _, e := range s.story() {
		e.Text = ""
		sh.story = append(sh.story, e)
	}
	return sh
}

// classes are the SVG's elements and their classes in document order:
// what it draws, without where its labels' lengths put them.
func classes(e *element) []string {
	out := []string{e.name + "." + e.attr["class"]}
	for _, c := range e.children {
		out = append(out, classes(c)...)
	}
	return out
}

// TestRewordedLabelsDrawAlike rewords every fault's label and detail, in
// real runs (read from version 1, their fields filled from their labels)
// and in constructed ones, and checks that the scenes, the stories' steps
// and the drawings' shapes stay the same: nothing reads the text.
func TestRewordedLabelsDrawAlike(t *testing.T) {
	type run struct {
		name   string
		ops    []history.Op
		checks []checker.Check
	}
	runs := []run{
		{name: "every fault", ops: everyFaultHistory(), checks: []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Illegal}}},
		{name: "redlock", ops: redlockHistory(), checks: []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Illegal}}},
	}
	for _, name := range []string{"5-del-release-broken", "3-no-ttl-broken", "11-redlock-clock-jump-broken", "12-fenced-fixed"} {
		ops, checks := load(t, name)
		runs = append(runs, run{name, ops, checks})
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			other := reworded(r.ops)
			if want, got := shapeOf(r.ops, r.checks), shapeOf(other, r.checks); !reflect.DeepEqual(got, want) {
				t.Errorf("reworded labels changed the scene:\n got %+v\nwant %+v", got, want)
			}
			if want, got := classes(parse(t, Draw(r.ops, r.checks))), classes(parse(t, Draw(other, r.checks))); !reflect.DeepEqual(got, want) {
				t.Errorf("reworded labels changed the timeline's elements:\n got %q\nwant %q", got, want)
			}
			if want, got := len(Schedule(r.ops)), len(Schedule(other)); got != want {
				t.Errorf("reworded labels made %d schedule lines, want %d", got, want)
			}
		})
	}
}

// TestEveryFaultLanes checks where the constructed run's faults are drawn,
// from their targets alone.
func TestEveryFaultLanes(t *testing.T) {
	s := newScene(everyFaultHistory(), nil)
	want := []string{"node 1", "node 2", "master", "Sentinel", "system", "network"}
	if !reflect.DeepEqual(s.lanes, want) {
		t.Errorf("lanes %q, want %q", s.lanes, want)
	}
	if n := len(s.hatched[1]); n != 3 {
		t.Errorf("client 1 has %d faults on its row, want its slow work, delayed command and injection wait", n)
	}
	if n := len(s.hatched[0]); n != 2 {
		t.Errorf("client 0 has %d faults on its row, want its pause and dropped connection", n)
	}
}
