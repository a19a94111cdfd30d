package checker

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// grant is node's reply to client's SET NX PX in an acquire, sent at call
// and answered at ret (ms); ok says whether it granted the key.
func grant(client, node int, call, ret time.Duration, ok bool) history.Op {
	out := models.Failed
	if ok {
		out = models.OK
	}
	return history.Op{Client: client, Kind: history.KindReply, Key: "lock", Node: node, Command: "SET NX PX", Phase: "acquire",
		Call: call * msec, Return: ret * msec, Outcome: out}
}

// grants are client's grants on nodes, the first sent at from, one a
// millisecond after the other, each answered at once.
func grants(client int, from time.Duration, nodes ...int) []history.Op {
	var out []history.Op
	for i, n := range nodes {
		at := from + time.Duration(i)
		out = append(out, grant(client, n, at, at, true))
	}
	return out
}

// renew is client's renewal of its key on node, sent in the background.
func renew(client, node int, call, ret time.Duration, ok bool) history.Op {
	r := grant(client, node, call, ret, ok)
	r.Command, r.Phase = "EVAL", "background"
	return r
}

// partitioned is a partition of client's links to nodes, from call to ret.
func partitioned(client int, call, ret time.Duration, nodes ...int) history.Op {
	f := withEffect(client, call, ret, "partition", history.EffectStall)
	f.FaultKind, f.Target = "partition", &history.Target{Type: history.TargetLink, Nodes: nodes}
	return f
}

// onNode is a fault of kind and effect on lock nodes, from call to ret (ms).
func onNodeFault(kind string, e history.Effect, call, ret time.Duration, nodes ...int) history.Op {
	f := withEffect(-1, call, ret, kind+" of lock nodes", e)
	f.FaultKind, f.Target = kind, &history.Target{Type: history.TargetNode, Nodes: nodes}
	return f
}

// TestJudgeNodeByNode: a Redlock overlap is judged on the nodes where both
// holds were granted, by the nodes' own TTL, and a fault on a node no
// shared hold depended on explains nothing.
func TestJudgeNodeByNode(t *testing.T) {
	end := endOp(2000, history.End{TTL: 200 * msec, Probe: true, Timed: true})
	// Client 0 holds from 10 ms to 100 ms on nodes 0, 1, 2; client 1 is
	// granted nodes 2, 3, 4 from 21 ms and holds from 40 ms.
	overlap := func(more ...history.Op) []history.Op {
		ops := append([]history.Op{}, grants(0, 1, 0, 1, 2)...)
		ops = append(ops, acq(0, 0, 10, models.OK))
		ops = append(ops, grants(1, 21, 2, 3, 4)...)
		ops = append(ops, more...)
		return append(ops, acq(1, 20, 40, models.OK), rel(1, 90, 91), rel(0, 100, 101), end)
	}
	// Client 0's acquire waits on paused nodes 3 and 4 until 480 ms,
	// long after its keys on nodes 0 to 2 expired (by 204 ms); client 1
	// takes those three at 300 ms and holds from 320 ms.
	slow := func(more ...history.Op) []history.Op {
		ops := append([]history.Op{}, grants(0, 1, 0, 1, 2)...)
		ops = append(ops, grant(0, 3, 10, 470, true), grant(0, 4, 471, 480, true))
		ops = append(ops, grants(1, 300, 0, 1, 2)...)
		ops = append(ops, grant(1, 3, 303, 303, false), grant(1, 4, 304, 304, false), acq(1, 299, 320, models.OK))
		ops = append(ops, more...)
		return append(ops, acq(0, 0, 500, models.OK), rel(1, 550, 551), rel(0, 600, 601), end)
	}
	paused := onNodeFault("pause-node", history.EffectStall, 8, 470, 3, 4)
	tests := []struct {
		name string
		ops  []history.Op
		want Class
		why  string // a substring of the first overlap's Why
	}{{
		name: "the earlier key still valid on the shared node, no fault on it: own",
		ops:  overlap(),
		want: Proved, why: "node 2 granted client 1 the key by 21 ms while client 0's, granted there at 3 ms, was valid until 203 ms",
	}, {
		name: "a restart of the shared node lost the key: inherent, named",
		ops:  overlap(onNodeFault("kill-node", history.EffectLoss, 15, 18, 2)),
		want: Explained, why: `node 2 lost client 0's key to "kill-node of lock nodes" at 15 ms`,
	}, {
		name: "a clock jump on a node no shared hold depended on explains nothing",
		ops:  overlap(onNodeFault("clock-jump", history.EffectLoss, 15, 15, 4)),
		want: Proved, why: "no fault touched node 2",
	}, {
		name: "a pause of the shared node that no one waited on: own by the clients' leases",
		ops:  overlap(onNodeFault("pause-node", history.EffectStall, 12, 19, 2)),
		want: Proved, why: "",
	}, {
		name: "a pause of the shared node that held the later grant up leaves it open",
		ops:  overlap(onNodeFault("pause-node", history.EffectStall, 12, 25, 2)),
		want: Unexplained, why: `"pause-node of lock nodes" touched the node meanwhile`,
	}, {
		name: "a pause of a node neither waited on stalls neither: own",
		ops:  overlap(onNodeFault("pause-node", history.EffectStall, 2, 60, 3)),
		want: Proved, why: "node 2 granted client 1",
	}, {
		name: "the holder's own release removed it first",
		ops: overlap(history.Op{Client: 0, Kind: history.KindReply, Key: "lock", Node: 2, Command: "EVAL", Phase: "release",
			Call: 15 * msec, Return: 16 * msec, Outcome: models.OK}),
		want: Explained, why: "client 0's own release removed its key from node 2",
	}, {
		name: "another client removed the valid key: own",
		ops: overlap(history.Op{Client: 2, Kind: history.KindReply, Key: "lock", Node: 2, Command: "DEL", Phase: "release",
			Call: 15 * msec, Return: 16 * msec, Outcome: models.OK}),
		want: Proved, why: "client 2 removed client 0's key from node 2",
	}, {
		name: "grants that overlap in time leave the node open",
		ops: func() []history.Op {
			// A pause of client 1 keeps the clients' leases from proving it.
			ops := overlap(withEffect(1, 22, 30, "client pause", history.EffectDelay))
			for i := range ops {
				if ops[i].Kind == history.KindReply && ops[i].Client == 0 && ops[i].Node == 2 {
					ops[i].Return = 30 * msec
				}
			}
			return ops
		}(),
		want: Unexplained, why: "the replies do not tell which the node ran first",
	}, {
		name: "an SET NX grant within the expiry's uncertainty proves the key expired: slow work, inherent",
		ops: []history.Op{grant(0, 2, 1, 10, true), acq(0, 0, 12, models.OK), slowWork(0, 12, 290),
			grant(1, 2, 205, 206, true), acq(1, 204, 220, models.OK), rel(1, 250, 251), rel(0, 300, 301), end},
		want: Explained, why: "client 0's key expired on node 2 by 206 ms, by the node's TTL, while it worked on",
	}, {
		name: "a renewal that failed with no fault on it: slow work explains nothing",
		ops: []history.Op{grant(0, 2, 1, 10, true), acq(0, 0, 12, models.OK), slowWork(0, 12, 290), renew(0, 2, 100, 101, false),
			grant(1, 2, 205, 206, true), acq(1, 204, 220, models.OK), rel(1, 250, 251), rel(0, 300, 301), end},
		want: Unexplained, why: "its work, or the loaded machine, outlived the key",
	}, {
		name: "a renewal that failed under a partition of the holder's link: inherent",
		ops: []history.Op{grant(0, 2, 1, 10, true), acq(0, 0, 12, models.OK), slowWork(0, 12, 290), renew(0, 2, 100, 101, false),
			partitioned(0, 90, 120, 2), grant(1, 2, 205, 206, true), acq(1, 204, 220, models.OK), rel(1, 250, 251), rel(0, 300, 301), end},
		want: Explained, why: `its renewal there at 100 ms failed under "partition"`,
	}, {
		name: "an acquire that outlived its first keys (elapsed ignored): own",
		ops:  slow(paused),
		want: Proved, why: "client 0 counted node 0, whose key had expired by the node's TTL at 201 ms, 279 ms before its acquire's last reply at 480 ms",
	}, {
		name: "a removal that may have run before the take: the expiry still decides",
		ops: slow(paused, history.Op{Client: 2, Kind: history.KindReply, Key: "lock", Node: 0, Command: "EVAL", Phase: "release",
			Call: 1 * msec, Return: 2 * msec, Outcome: models.OK}),
		want: Proved, why: "client 0 counted node 0",
	}, {
		name: "a removal once the key had expired removed another's: it tells nothing",
		ops: slow(paused, history.Op{Client: 2, Kind: history.KindReply, Key: "lock", Node: 0, Command: "EVAL", Phase: "release",
			Call: 250 * msec, Return: 251 * msec, Outcome: models.OK}),
		want: Proved, why: "client 0 counted node 0",
	}, {
		name: "the key expired after the acquire's last reply, before it returned: open",
		ops: []history.Op{grant(0, 0, 1, 1, true), grant(0, 1, 2, 2, true), grant(0, 2, 3, 3, true), acq(0, 0, 260, models.OK),
			grant(1, 0, 240, 240, true), grant(1, 1, 241, 241, true), grant(1, 2, 242, 242, true), acq(1, 239, 250, models.OK),
			rel(1, 300, 301), rel(0, 320, 321), end},
		want: Unexplained, why: "after its acquire's last reply and 59 ms before the acquire returned",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := Judge(tt.ops)
			if len(j.Overlaps) == 0 {
				t.Fatal("no overlap")
			}
			o := j.Overlaps[0]
			if o.Class != tt.want || !strings.Contains(o.Why, tt.why) {
				t.Errorf("first overlap %s, %q; want %s, with %q", o.Class, o.Why, tt.want, tt.why)
			}
			if tt.want == Unexplained && !strings.Contains(j.Undecided(), tt.why) {
				t.Errorf("Undecided() = %q, want it to say %q", j.Undecided(), tt.why)
			}
		})
	}
}

// TestStallHoldsUpOnlyWaiters: a paused node holds a client up only while
// it had a command in flight to that node, and only for that time.
func TestStallHoldsUpOnlyWaiters(t *testing.T) {
	end := endOp(2000, history.End{TTL: 200 * msec, Probe: true, Timed: true})
	pause := onNodeFault("pause-node", history.EffectStall, 20, 400, 4)
	// Client 0 holds from 10 ms past its lease; client 1 takes the lock
	// at 300 ms on nodes 0, 1, 2. Whether client 0 was held up by the
	// pause decides whether its expired keys are explained.
	ops := func(waited history.Op) []history.Op {
		out := append(grants(0, 1, 0, 1, 2), grant(0, 3, 4, 5, true), waited, acq(0, 0, 10, models.OK))
		out = append(out, grants(1, 300, 0, 1, 2)...)
		return append(out, pause, acq(1, 299, 310, models.OK), rel(1, 350, 351), rel(0, 500, 501), end)
	}
	renewal := func(node int, call, ret time.Duration) history.Op {
		return history.Op{Client: 0, Kind: history.KindReply, Key: "lock", Node: node, Command: "EVAL", Phase: "background",
			Call: call * msec, Return: ret * msec, Outcome: models.Failed}
	}
	tests := []struct {
		name   string
		waited history.Op
		want   Class
	}{
		{"client 0 waited on node 4 for 330 ms", renewal(4, 30, 360), Explained},
		{"client 0 waited on node 3 only", renewal(3, 30, 360), Unexplained},
		{"client 0 waited on node 4 for 20 ms", renewal(4, 30, 50), Unexplained},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := Judge(ops(tt.waited))
			if len(j.Overlaps) == 0 {
				t.Fatal("no overlap")
			}
			if o := j.Overlaps[0]; o.Class != tt.want {
				t.Errorf("first overlap %s (%s), want %s", o.Class, o.Why, tt.want)
			}
		})
	}
}

// TestMachineStallBesideANodeFault: a node killed while the holder worked,
// waiting on no node, does not account for the holder's stall: the
// machine stalled it, as TestStallIsNamed's holder with no fault at all.
// Had the holder waited on that node, the fault would account for it.
func TestMachineStallBesideANodeFault(t *testing.T) {
	for _, tc := range []struct {
		name   string
		waited history.Op // a reply of client 2's, on node 2 or not
		want   Verdict
	}{
		{"the holder waited on no node struck", grant(2, 0, 0, 1, true), Unknown},
		{"the holder waited on the node struck", history.Op{Client: 2, Kind: history.KindReply, Key: "lock", Node: 2, Command: "EVAL",
			Phase: "background", Call: 10 * msec, Return: 340 * msec, Outcome: models.OK}, Illegal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := []history.Op{
				tc.waited, acq(2, 0, 1, models.OK), sec(2, 2, 352, 10, 9),
				onNodeFault("kill-node", history.EffectStall, 5, 345, 2),
				acq(1, 320, 321, models.OK), rel(1, 331, 332), rel(2, 354, 355),
				endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
			}
			c := Run(ops, Options{Initial: 10}).Checks[0]
			if c.Verdict != tc.want || (tc.want == Unknown && !strings.Contains(c.Detail, "the machine stalled client 2")) {
				t.Errorf("lock %s (%s), want %s", c.Verdict, c.Detail, tc.want)
			}
		})
	}
}
