package timeline

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

const ms = time.Millisecond

// rep is a reply of node to client's command, sent at call and answered at
// call+1 ms; outcome "" with an error is an error reply, "none" no reply.
func rep(client, node int, call time.Duration, command, phase string, outcome models.Outcome) history.Op {
	op := history.Op{Client: client, Kind: history.KindReply, Key: "lock", Node: node, Command: command, Phase: phase,
		Call: call * ms, Return: (call + 1) * ms, Outcome: outcome}
	if outcome == "none" {
		op.Outcome, op.Return, op.Error = "", history.NeverReturned, "i/o timeout"
	}
	return op
}

// each is one reply per node of nodes, all sent at call.
func each(client int, nodes []int, call time.Duration, command, phase string, outcome models.Outcome) []history.Op {
	var out []history.Op
	for _, n := range nodes {
		out = append(out, rep(client, n, call, command, phase, outcome))
	}
	return out
}

// redlockHistory is a small hand-written Redlock run over five nodes:
// client 0 takes nodes 0–2 and misses 3 and 4 (no reply); client 1, at the
// same time, gets 3 and 4 only, misses the quorum and gives them back;
// client 0 releases, takes the lock again, renews it on node 0 only and
// never releases; node 2 restarts empty and grants the key to client 1.
func redlockHistory() []history.Op {
	var ops []history.Op
	add := func(o ...history.Op) { ops = append(ops, o...) }
	add(each(0, []int{0, 1, 2}, 1, "SET PX NX", "acquire", models.OK)...)
	add(each(0, []int{3, 4}, 1, "SET PX NX", "acquire", "none")...)
	add(each(1, []int{3, 4}, 2, "SET PX NX", "acquire", models.OK)...)
	add(each(1, []int{0, 1, 2}, 2, "SET PX NX", "acquire", models.Failed)...)
	add(each(1, []int{3, 4}, 6, "EVALSHA", "acquire", models.OK)...)
	add(each(1, []int{0, 1, 2}, 6, "EVALSHA", "acquire", models.Failed)...)
	add(history.Op{Client: 0, Kind: history.KindAcquire, Key: "lock", Call: 0, Return: 10 * ms, Outcome: models.OK},
		history.Op{Client: 1, Kind: history.KindAcquire, Key: "lock", Call: 1 * ms, Return: 8 * ms, Outcome: models.Failed})
	add(each(0, []int{0, 1, 2}, 50, "EVAL", "release", models.OK)...)
	add(history.Op{Client: 0, Kind: history.KindRelease, Key: "lock", Call: 49 * ms, Return: 52 * ms, Outcome: models.OK})
	add(each(0, []int{0, 1, 2}, 70, "SET PX NX", "acquire", models.OK)...)
	add(history.Op{Client: 0, Kind: history.KindAcquire, Key: "lock", Call: 69 * ms, Return: 72 * ms, Outcome: models.OK})
	add(rep(0, 0, 120, "PEXPIRE", "background", models.OK))
	add(history.Op{Client: -1, Kind: history.KindFault, Call: 130 * ms, Return: 140 * ms, Fault: "kill lock node 2 (SIGKILL), restart it empty on the same port", Effect: history.EffectStall,
		FaultKind: "kill-node", Target: &history.Target{Type: history.TargetNode, Nodes: []int{2}}},
		history.Op{Client: -1, Kind: history.KindFault, Call: 140 * ms, Return: 140 * ms, Fault: "lock node 2 restarted empty (every key it held is lost)", Effect: history.EffectLoss,
			FaultKind: "kill-node", Part: history.PartRestart, Target: &history.Target{Type: history.TargetNode, Nodes: []int{2}}})
	add(rep(1, 2, 150, "SET PX NX", "acquire", models.OK))
	add(history.Op{Client: 1, Kind: history.KindAcquire, Key: "lock", Call: 149 * ms, Return: 160 * ms, Outcome: models.Failed})
	add(history.Op{Client: -1, Kind: history.KindEnd, Call: 300 * ms, Return: 300 * ms, End: &history.End{TTL: 100 * ms, Probe: true}})
	return ops
}

func TestNodeHolds(t *testing.T) {
	ops := redlockHistory()
	holds, ticks := nodeHolds(ops, 100*ms, history.Last(ops), nil)
	span := func(h nodeHold) string {
		s := fmt.Sprintf("c%d %d–%d", h.client, h.from/ms, h.to/ms)
		if h.lost {
			s += " lost"
		}
		return s
	}
	for node, want := range map[int][]string{
		0: {"c0 2–51", "c0 71–220"},                    // renewed at 120: lease to 220
		1: {"c0 2–51", "c0 71–170"},                    // no renewal: the lease ends 100 ms after the call
		2: {"c0 2–51", "c0 71–140 lost", "c1 151–250"}, // the restart empty lost it
		3: {"c1 3–7"},                                  // given back when the quorum was missed
		4: {"c1 3–7"},
	} {
		var got []string
		for _, h := range holds[node] {
			got = append(got, span(h))
		}
		if !slices.Equal(got, want) {
			t.Errorf("node %d holds %q, want %q", node, got, want)
		}
	}
	for node := range 5 {
		var got []string
		for _, tk := range ticks[node] {
			got = append(got, fmt.Sprintf("c%d %d", tk.client, tk.at/ms))
		}
		want := []string{"c1 3"} // refused SET NX, not the give-back's no
		if node >= 3 {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("node %d refusals %q, want %q", node, got, want)
		}
	}
}

func TestDrawNodeLanes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ops   []history.Op
		lanes []string            // node lanes, in order
		holds map[string][]string // data-client of the holds in each node lane
	}{{
		name:  "redlock",
		ops:   redlockHistory(),
		lanes: []string{"node 0", "node 1", "node 2", "node 3", "node 4"},
		holds: map[string][]string{"node 0": {"0", "0"}, "node 2": {"0", "0", "1"}, "node 3": {"1"}},
	}, {
		name: "one node: no node lanes",
		ops: []history.Op{
			{Client: 0, Kind: history.KindAcquire, Key: "lock", Call: 0, Return: ms, Outcome: models.OK},
			{Client: 0, Kind: history.KindRelease, Key: "lock", Call: 5 * ms, Return: 6 * ms, Outcome: models.OK},
			{Client: -1, Kind: history.KindEnd, Call: 10 * ms, Return: 10 * ms, End: &history.End{TTL: 100 * ms, Probe: true}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			detail := parse(t, Draw(tc.ops, nil)).find("view detail")[0]
			var lanes []string
			for _, l := range detail.find("node-lane") {
				name := l.texts()[0]
				lanes = append(lanes, name)
				var clients []string
				for _, h := range l.find("node-hold") {
					clients = append(clients, h.attr["data-client"])
				}
				if want, ok := tc.holds[name]; ok && !slices.Equal(clients, want) {
					t.Errorf("%s: holds of clients %q, want %q", name, clients, want)
				}
			}
			if !slices.Equal(lanes, tc.lanes) {
				t.Errorf("node lanes %q, want %q", lanes, tc.lanes)
			}
			// The node's fault still shows in its lane.
			if tc.name == "redlock" {
				var faults []string
				for _, l := range detail.find("node-lane") {
					for _, f := range l.find("fault") {
						faults = append(faults, l.texts()[0]+": "+strings.Join(f.texts(), ""))
					}
				}
				// The kill and the restart that lost the key.
				if len(faults) != 2 || !strings.HasPrefix(faults[0], "node 2: ") || !strings.HasPrefix(faults[1], "node 2: ") {
					t.Errorf("faults in node lanes: %q", faults)
				}
			}
			checkNoOverlap(t, detail)
		})
	}
}

// TestFailoverAtPromotion: a Sentinel failover is drawn from the master's
// kill as the failover in progress, its promotion labelled at the moment
// Sentinel made it, and the schedule tells it then.
func TestFailoverAtPromotion(t *testing.T) {
	ops := []history.Op{
		{Client: 0, Kind: history.KindAcquire, Key: "lock", Call: 0, Return: ms, Outcome: models.OK},
		{Client: 0, Kind: history.KindRelease, Key: "lock", Call: 4000 * ms, Return: 4001 * ms, Outcome: models.OK},
		{Client: -1, Kind: history.KindFault, Call: 1033 * ms, Return: 3000 * ms, Fault: history.FaultFailover,
			FaultKind: "kill-master", Part: history.PartFailover, Target: &history.Target{Type: history.TargetNode, Role: "master"},
			Detail: "Sentinel promoted n2 in place of n1 after 1.967s"},
		{Client: -1, Kind: history.KindEnd, Call: 5000 * ms, Return: 5000 * ms, End: &history.End{TTL: 100 * ms, Probe: true}},
	}
	detail := parse(t, Draw(ops, nil)).find("view detail")[0]
	var promoted, progress *element
	for _, l := range detail.find("label") {
		switch {
		case strings.HasPrefix(l.text, "3000 ms: Sentinel promoted n2"):
			promoted = l
		case strings.HasPrefix(l.text, "failover in progress"):
			progress = l
		}
	}
	if promoted == nil || progress == nil {
		t.Fatalf("labels: promotion %v, in progress %v", promoted != nil, progress != nil)
	}
	x := func(e *element) float64 { var v float64; fmt.Sscan(e.attr["x"], &v); return v }
	at := func(d time.Duration) float64 {
		return laneLabelW + float64(d)/float64(5000*ms+1)*(Width-laneLabelW-rightPad)
	}
	if d := x(promoted) - at(3000*ms); d < -1 || d > 1 {
		t.Errorf("promotion labelled at x=%.1f, want %.1f (3000 ms)", x(promoted), at(3000*ms))
	}
	if d := x(progress) - at(1033*ms); d < -1 || d > 1 {
		t.Errorf("failover in progress labelled at x=%.1f, want %.1f (1033 ms)", x(progress), at(1033*ms))
	}
	if got := Schedule(ops); len(got) != 1 || !strings.HasPrefix(got[0], "3.00 s: Sentinel promoted n2 in place of n1") {
		t.Errorf("schedule %q", got)
	}
}
