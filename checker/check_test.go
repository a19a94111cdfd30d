package checker

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

const msec = time.Millisecond

func acq(client int, call, ret time.Duration, out models.Outcome) history.Op {
	return history.Op{Client: client, Kind: history.KindAcquire, Key: "lock", Call: call * msec, Return: ret * msec, Outcome: out}
}

func rel(client int, call, ret time.Duration) history.Op {
	return history.Op{Client: client, Kind: history.KindRelease, Key: "lock", Call: call * msec, Return: ret * msec, Outcome: models.OK}
}

func sec(client int, call, ret time.Duration, observed, written int64) history.Op {
	return history.Op{Client: client, Kind: history.KindSection, Call: call * msec, Return: ret * msec,
		Observed: observed, Written: written, Result: models.Wrote}
}

func endOp(at time.Duration, e history.End) history.Op {
	return history.Op{Client: -1, Kind: history.KindEnd, Call: at * msec, Return: at * msec, End: &e}
}

// stallThenProvedOverlap is a machine stall, and then the lock's own
// failure: client 0, stalled 220 ms past its work, releases and deletes the
// key client 1 took 35 ms before, and client 2 gets in beside client 1.
// That overlap is proved from the calls, whatever the machine did to
// client 0.
func stallThenProvedOverlap() []history.Op {
	return []history.Op{
		acq(0, 0, 1, models.OK), sec(0, 2, 352, 10, 9),
		acq(1, 320, 321, models.OK), sec(1, 322, 330, 10, 9),
		rel(0, 354, 355),
		acq(2, 360, 361, models.OK), rel(2, 370, 371), rel(1, 380, 381),
		endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
	}
}

func TestRun(t *testing.T) {
	probeOK := history.End{Initial: 10, Stock: 8, Probe: true}
	// slowHolds are four holders that never release: each waiter gets the
	// lock only when the last lease runs out, about 300 ms later.
	slowHolds := []history.Op{
		acq(0, 0, 1, models.OK), rel(0, 5, 6),
		acq(1, 2, 300, models.OK), rel(1, 305, 306),
		acq(2, 2, 600, models.OK), rel(2, 605, 606),
		acq(3, 2, 900, models.OK), rel(3, 905, 906),
	}
	tests := []struct {
		name string
		ops  []history.Op
		want map[string]Verdict
		// late are the checkers whose unknown the machine made
		// (Check.Late); no other unknown may say so.
		late []string
	}{{
		name: "two clean cycles",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 5, 10, 9), rel(0, 6, 7),
			acq(1, 3, 4, models.Failed), acq(1, 8, 9, models.OK), sec(1, 10, 12, 9, 8), rel(1, 13, 14),
			endOp(20, probeOK),
		},
		want: map[string]Verdict{CheckLock: OK, CheckResource: OK, CheckLiveness: OK, CheckHandover: OK},
	}, {
		name: "lease expired: both held and both sold from 10",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 50, 10, 9),
			acq(1, 20, 21, models.OK), sec(1, 22, 30, 10, 9), rel(1, 31, 32),
			rel(0, 51, 52),
			endOp(60, history.End{Initial: 10, Stock: 9, Probe: true}),
		},
		want: map[string]Verdict{CheckLock: Illegal, CheckResource: Illegal, CheckLiveness: OK},
	}, {
		name: "crash holding, no expiry: stuck",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), {Client: 0, Kind: history.KindCrash, Call: 2 * msec, Return: 2 * msec},
			acq(1, 3, 4, models.Failed),
			endOp(20, history.End{Initial: 10, Stock: 10, Held: true, Bound: 10 * msec}),
		},
		want: map[string]Verdict{CheckLock: OK, CheckResource: OK, CheckLiveness: Stuck, CheckHandover: OK},
	}, {
		name: "crash then takeover after expiry is legal",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), {Client: 0, Kind: history.KindCrash, Call: 2 * msec, Return: 2 * msec},
			acq(1, 300, 301, models.OK), rel(1, 302, 303),
			endOp(400, probeOK),
		},
		want: map[string]Verdict{CheckLock: OK, CheckLiveness: OK, CheckHandover: OK},
	}, {
		name: "holders never release: slow handovers",
		ops:  append(slices.Clone(slowHolds), endOp(1000, probeOK)),
		want: map[string]Verdict{CheckLock: OK, CheckHandover: Slow},
	}, {
		name: "slow handovers in which the machine ran the harness late: unknown",
		ops: append(slices.Clone(slowHolds), endOp(1000, history.End{Initial: 10, Stock: 10, Probe: true,
			Late: []history.Span{{From: 20 * msec, To: 280 * msec}, {From: 320 * msec, To: 580 * msec}, {From: 620 * msec, To: 880 * msec}}})),
		want: map[string]Verdict{CheckLock: OK, CheckHandover: Unknown},
		late: []string{CheckHandover},
	}, {
		name: "slow handovers in which a server's thread waited for a core: unknown",
		ops: append(slices.Clone(slowHolds), endOp(1000, history.End{Initial: 10, Stock: 10, Probe: true,
			Queued: []history.Span{{From: 100 * msec, To: 300 * msec}, {From: 400 * msec, To: 600 * msec}, {From: 700 * msec, To: 900 * msec}}})),
		want: map[string]Verdict{CheckLock: OK, CheckHandover: Unknown},
		late: []string{CheckHandover},
	}, {
		name: "a server's wait too short to explain the handovers: slow",
		ops: append(slices.Clone(slowHolds), endOp(1000, history.End{Initial: 10, Stock: 10, Probe: true,
			Queued: []history.Span{{From: 150 * msec, To: 300 * msec}, {From: 450 * msec, To: 600 * msec}, {From: 750 * msec, To: 900 * msec}}})),
		want: map[string]Verdict{CheckLock: OK, CheckHandover: Slow},
	}, {
		name: "the machine late outside the handovers excuses none",
		ops: append(slices.Clone(slowHolds), endOp(1000, history.End{Initial: 10, Stock: 10, Probe: true,
			Late: []history.Span{{From: 906 * msec, To: 990 * msec}, {From: 1 * msec, To: 5 * msec}}})),
		want: map[string]Verdict{CheckLock: OK, CheckHandover: Slow},
	}, {
		name: "two slow handovers are too few to call the lock slow",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), rel(0, 5, 6),
			acq(1, 2, 300, models.OK), rel(1, 305, 306),
			acq(2, 2, 600, models.OK), rel(2, 605, 606),
			endOp(700, probeOK),
		},
		want: map[string]Verdict{CheckLock: OK, CheckHandover: Unknown},
	}, {
		name: "unknown acquire changes nothing",
		ops: []history.Op{
			{Client: 0, Kind: history.KindAcquire, Key: "lock", Call: 0, Return: history.NeverReturned, Outcome: models.Unknown},
			acq(1, 1, 2, models.OK), rel(1, 3, 4),
			endOp(10, probeOK),
		},
		want: map[string]Verdict{CheckLock: OK, CheckLiveness: OK},
	}, {
		name: "reentrant hold, released twice, then another client",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), acq(0, 2, 3, models.OK), rel(0, 4, 5), rel(0, 6, 7),
			acq(1, 8, 9, models.OK), rel(1, 10, 11),
			endOp(20, probeOK),
		},
		want: map[string]Verdict{CheckLock: OK},
	}, {
		// Client 0 held the lock 353 ms for 100 ms of work with no fault on
		// it: a loaded host stalled it past its 300 ms TTL, so the overlap
		// says nothing about the lock.
		name: "machine stall past the TTL: unknown, not illegal",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 352, 10, 9),
			acq(1, 320, 321, models.OK), sec(1, 322, 330, 10, 9), rel(1, 331, 332),
			rel(0, 354, 355),
			endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
		},
		want: map[string]Verdict{CheckLock: Unknown, CheckResource: Unknown, CheckLiveness: OK},
		late: []string{CheckLock, CheckResource},
	}, {
		name: "a machine stall, then a proved overlap: illegal",
		ops:  stallThenProvedOverlap(),
		want: map[string]Verdict{CheckLock: Illegal, CheckResource: Illegal, CheckLiveness: OK},
	}, {
		name: "the same hold stretched by a fault on the holder: illegal",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 352, 10, 9),
			{Client: 0, Kind: history.KindFault, Call: 50 * msec, Return: 300 * msec, Fault: "client pause"},
			acq(1, 320, 321, models.OK), sec(1, 322, 330, 10, 9), rel(1, 331, 332),
			rel(0, 354, 355),
			endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
		},
		want: map[string]Verdict{CheckLock: Illegal, CheckResource: Illegal, CheckLiveness: OK},
	}, {
		// 195 ms of the 320 are a nested acquire waiting for the lock the
		// client already holds: the lock's doing, not a stall.
		name: "a nested acquire stretches the hold: illegal",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 352, 10, 9),
			{Client: 0, Kind: history.KindAcquire, Key: "lock", Call: 100 * msec, Return: 295 * msec, Outcome: models.Failed, Nested: true},
			acq(1, 320, 321, models.OK), sec(1, 322, 330, 10, 9), rel(1, 331, 332),
			rel(0, 354, 355),
			endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
		},
		want: map[string]Verdict{CheckLock: Illegal, CheckResource: Illegal, CheckLiveness: OK},
	}, {
		// Round trips add a few milliseconds to every hold: not a stall.
		name: "a few milliseconds over work and faults: illegal",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 352, 10, 9),
			{Client: 0, Kind: history.KindFault, Call: 10 * msec, Return: 205 * msec, Fault: history.FaultSlowWork, FaultKind: "slow-work"},
			acq(1, 320, 321, models.OK), sec(1, 322, 330, 10, 9), rel(1, 331, 332),
			rel(0, 354, 355),
			endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
		},
		want: map[string]Verdict{CheckLock: Illegal, CheckResource: Illegal, CheckLiveness: OK},
	}, {
		name: "a fault on another client does not explain the stall",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 352, 10, 9),
			{Client: 2, Kind: history.KindFault, Call: 50 * msec, Return: 300 * msec, Fault: "client pause"},
			acq(1, 320, 321, models.OK), sec(1, 322, 330, 10, 9), rel(1, 331, 332),
			rel(0, 354, 355),
			endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
		},
		want: map[string]Verdict{CheckLock: Unknown, CheckResource: Unknown},
		late: []string{CheckLock, CheckResource},
	}, {
		// A node killed and restarted at client 0's failpoint: the restart
		// took 250 ms on a loaded machine, and client 0 waited for it
		// inside its section. The node fault covers the same time, but the
		// wait is the harness's, not the scenario's: unknown.
		name: "the harness held the holder injecting a fault: unknown",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 352, 10, 9),
			{Client: -1, Kind: history.KindFault, Call: 50 * msec, Return: 300 * msec, Fault: "kill lock node 2", Effect: history.EffectStall},
			{Client: 0, Kind: history.KindFault, Call: 50 * msec, Return: 300 * msec, Fault: history.FaultInjecting, Effect: history.EffectHarness},
			acq(1, 320, 321, models.OK), sec(1, 322, 330, 10, 9), rel(1, 331, 332),
			rel(0, 354, 355),
			endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
		},
		want: map[string]Verdict{CheckLock: Unknown, CheckResource: Unknown, CheckLiveness: OK},
		late: []string{CheckLock, CheckResource},
	}, {
		// The same node fault, injected by the schedule with nobody
		// waiting for it, stretches the hold as a fault: illegal.
		name: "a node fault nobody waited for: illegal",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 352, 10, 9),
			{Client: -1, Kind: history.KindFault, Call: 50 * msec, Return: 300 * msec, Fault: "kill lock node 2", Effect: history.EffectStall},
			{Client: 0, Kind: history.KindFault, Call: 50 * msec, Return: 52 * msec, Fault: history.FaultInjecting, Effect: history.EffectHarness},
			acq(1, 320, 321, models.OK), sec(1, 322, 330, 10, 9), rel(1, 331, 332),
			rel(0, 354, 355),
			endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
		},
		want: map[string]Verdict{CheckLock: Illegal, CheckResource: Illegal, CheckLiveness: OK},
	}, {
		name: "spoiled: every verdict unknown",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 5, 10, 9), rel(0, 6, 7),
			endOp(20, history.End{Initial: 10, Stock: 9, Probe: true,
				Spoiled: []string{"failpoint before-del never fired"}}),
		},
		want: map[string]Verdict{CheckLock: Unknown, CheckResource: Unknown, CheckLiveness: Unknown, CheckHandover: Unknown},
	}, {
		name: "a client unfinished when the machine gave it too little time: unknown",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), rel(0, 2, 3), acq(1, 2, 4, models.OK),
			endOp(3400, history.End{Initial: 10, Stock: 10, Probe: true, Stuck: []int{1},
				Bound: 1120 * msec, Waited: 3360 * msec, WaitLate: 2900 * msec}),
		},
		want: map[string]Verdict{CheckLock: OK, CheckLiveness: Unknown},
		late: []string{CheckLiveness},
	}, {
		name: "stuck though the machine ran late: the bound of its time had passed",
		ops: []history.Op{
			acq(0, 0, 1, models.OK), rel(0, 2, 3), acq(1, 2, 4, models.OK),
			endOp(3400, history.End{Initial: 10, Stock: 10, Held: true, Stuck: []int{1},
				Bound: 1120 * msec, Waited: 2400 * msec, WaitLate: 1200 * msec,
				ProbeWait: 3360 * msec, ProbeLate: 2900 * msec}),
		},
		want: map[string]Verdict{CheckLock: OK, CheckLiveness: Stuck},
	}, {
		name: "no end record: liveness unknown",
		ops:  []history.Op{acq(0, 0, 1, models.OK), rel(0, 2, 3)},
		want: map[string]Verdict{CheckLock: OK, CheckLiveness: Unknown},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Run(tt.ops, Options{Initial: 10})
			for _, m := range Mismatches(tt.want, r.Verdicts()) {
				t.Error(m)
			}
			for _, c := range r.Checks {
				if want := slices.Contains(tt.late, c.Checker); c.Late() != want {
					t.Errorf("%s %s (%s): Late = %v, want %v", c.Checker, c.Verdict, c.Detail, c.Late(), want)
				}
			}
		})
	}
}

func TestStallIsNamed(t *testing.T) {
	ops := []history.Op{
		acq(2, 0, 1, models.OK), sec(2, 2, 352, 10, 9),
		acq(1, 320, 321, models.OK), rel(1, 331, 332), rel(2, 354, 355),
		endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
	}
	c := Run(ops, Options{Initial: 10}).Checks[0]
	if c.Verdict != Unknown || !strings.Contains(c.Detail, "the machine stalled client 2 for 220 ms") ||
		!strings.Contains(c.Detail, "run again") {
		t.Errorf("lock: %s: %s", c.Verdict, c.Detail)
	}

	// The same stall, then an overlap proved beside it: the verdict stays
	// illegal and still names the stall, which may have set it off, but
	// asks for no second run.
	c = Run(stallThenProvedOverlap(), Options{Initial: 10}).Checks[0]
	if c.Verdict != Illegal || !strings.Contains(c.Detail, "also stalled a holder") ||
		!strings.Contains(c.Detail, "the machine stalled client 0 for 220 ms") || strings.Contains(c.Detail, "run again") {
		t.Errorf("proved lock: %s: %s", c.Verdict, c.Detail)
	}
}

// TestLateReplyAgesTheLease: a reply the machine delayed ages the lease
// before the acquire returns. Counted from the return, the holder is still
// inside its TTL when the next client gets in (an overlap the lock would
// be blamed for); counted from when the SET that took the key left it
// (Took), the lease had run out in a stall.
func TestLateReplyAgesTheLease(t *testing.T) {
	for _, tc := range []struct {
		took time.Duration
		want Verdict
	}{{0, Illegal}, {10 * msec, Unknown}} {
		late := acq(0, 0, 130, models.OK)
		late.Took = tc.took
		ops := []history.Op{
			late, sec(0, 131, 231, 10, 9),
			acq(1, 259, 260, models.OK), rel(1, 270, 271), rel(0, 300, 301),
			endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 200 * msec, Work: 100 * msec}),
		}
		c := Run(ops, Options{Initial: 10}).Checks[0]
		if c.Verdict != tc.want || (tc.want == Unknown && !strings.Contains(c.Detail, "the machine stalled client 0 for 150 ms")) {
			t.Errorf("took %s: lock %s (%s), want %s", tc.took, c.Verdict, c.Detail, tc.want)
		}
	}
}

// TestLateGrantIsTheMachines: the overlap's later holder took the key at
// 5 ms and its acquire returned only at 300 ms, its 200 ms lease long run
// out, just after client 1 took the expired key (as a lock program starved
// of a core answers late). Where the lag meter saw the machine run late
// through that wait, it is the machine's stall, not the lock's bug; where
// it did not, the lock's own acquire took that long, and the overlap
// stands.
func TestLateGrantIsTheMachines(t *testing.T) {
	for _, tc := range []struct {
		name string
		late []history.Span
		want Verdict
	}{
		{"the machine ran late", []history.Span{{From: 20 * msec, To: 120 * msec}, {From: 150 * msec, To: 290 * msec}}, Unknown},
		{"the machine ran on time", nil, Illegal},
		{"late for a little of it", []history.Span{{From: 20 * msec, To: 60 * msec}}, Illegal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			granted := acq(2, 0, 300, models.OK)
			granted.Took = 5 * msec
			taken := acq(1, 290, 298, models.OK)
			taken.Took = 292 * msec
			ops := []history.Op{
				granted, taken, sec(1, 298, 308, 10, 9), sec(2, 300, 310, 10, 9),
				rel(1, 309, 310), rel(2, 311, 312),
				endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 200 * msec, Work: 10 * msec, Late: tc.late}),
			}
			c := Run(ops, Options{Initial: 10}).Checks[0]
			if c.Verdict != tc.want || (tc.want == Unknown && (!strings.Contains(c.Detail, "the machine stalled client 2 for 295 ms inside its acquire") ||
				!c.Late())) {
				t.Errorf("lock %s (%s), want %s", c.Verdict, c.Detail, tc.want)
			}
		})
	}
}

// TestSilentServersAreNotStuck: a probe that got no lock is stuck only
// when the servers told it no. Each of its commands timing out with no
// reply, or some while the machine ran most of the probe's wait late,
// while they hold the lock for nobody, says the servers (or the machine
// under them) did not answer: unknown, and run again when the machine ran
// the probe late.
func TestSilentServersAreNotStuck(t *testing.T) {
	reply := func(ret time.Duration, err string) history.Op {
		return history.Op{Client: 4, Kind: history.KindReply, Key: "lock", Call: 20 * msec, Return: ret, Error: err, Command: "SET PX NX"}
	}
	for _, tc := range []struct {
		name    string
		replies []history.Op
		held    bool
		late    time.Duration
		want    Verdict
		again   bool
	}{
		{"no reply, the machine late", []history.Op{reply(history.NeverReturned, "i/o timeout"), reply(history.NeverReturned, "context deadline exceeded")},
			false, 3 * time.Second, Unknown, true},
		{"no reply, the machine on time", []history.Op{reply(history.NeverReturned, "i/o timeout")}, false, 0, Unknown, false},
		{"some replies, the machine late most of the wait", []history.Op{reply(history.NeverReturned, "i/o timeout"), reply(21*msec, "")},
			false, 3 * time.Second, Unknown, true},
		{"some replies, the machine late a little", []history.Op{reply(history.NeverReturned, "i/o timeout"), reply(21*msec, "")},
			false, time.Second, Stuck, false},
		{"every reply came", []history.Op{reply(21*msec, ""), reply(22*msec, "")}, false, 3 * time.Second, Stuck, false},
		{"no reply, the lock held", []history.Op{reply(history.NeverReturned, "i/o timeout")}, true, 3 * time.Second, Stuck, false},
		{"no command recorded", nil, false, 3 * time.Second, Stuck, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := append([]history.Op{
				acq(0, 0, 1, models.OK), rel(0, 5, 6),
				{Client: 4, Kind: history.KindAcquire, Key: "lock", Call: 10 * msec, Return: history.NeverReturned, Outcome: models.Unknown, Probe: true},
			}, tc.replies...)
			ops = append(ops, endOp(5000, history.End{Initial: 10, Stock: 10, Held: tc.held, Bound: 1600 * msec,
				ProbeWait: 5 * time.Second, ProbeLate: tc.late, TTL: 300 * msec}))
			c := checkLiveness(ops)
			if c.Verdict != tc.want || (c.Verdict == Unknown && c.Late() != tc.again) {
				t.Errorf("liveness %s (%s), want %s (run again: %v)", c.Verdict, c.Detail, tc.want, tc.again)
			}
		})
	}
}

// TestHarnessWaitIsNamed: a stall the harness's own injection caused says so.
func TestHarnessWaitIsNamed(t *testing.T) {
	ops := []history.Op{
		acq(0, 0, 1, models.OK), sec(0, 2, 352, 10, 9),
		{Client: 0, Kind: history.KindFault, Call: 50 * msec, Return: 300 * msec, Fault: history.FaultInjecting, Effect: history.EffectHarness},
		acq(1, 320, 321, models.OK), rel(1, 331, 332), rel(0, 354, 355),
		endOp(400, history.End{Initial: 10, Stock: 9, Probe: true, TTL: 300 * msec, Work: 100 * msec}),
	}
	c := Run(ops, Options{Initial: 10}).Checks[0]
	if c.Verdict != Unknown || !strings.Contains(c.Detail, "the harness held client 0 for 250 ms") {
		t.Errorf("lock: %s: %s", c.Verdict, c.Detail)
	}
}

func TestCheckDetectsFirstOverlap(t *testing.T) {
	ops := []history.Op{
		acq(0, 0, 1, models.OK), acq(1, 20, 21, models.OK), rel(1, 31, 32), rel(0, 51, 52),
		endOp(60, history.End{Probe: true}),
	}
	c := Run(ops, Options{})
	at := c.Detect()
	if at == nil || *at != 21*msec {
		t.Fatalf("detect = %v, want 21ms", at)
	}
}

// TestRunKeepsItsJudgement checks that a failing history's judgement is
// Run's own, so the runner need not judge the history again.
func TestRunKeepsItsJudgement(t *testing.T) {
	ops := stallThenProvedOverlap()
	r := Run(ops, Options{})
	got := r.Judgement(nil) // nil: Run's judgement or none
	if len(got.Overlaps) == 0 || len(got.Overlaps) != len(Judge(ops).Overlaps) {
		t.Errorf("Run kept %d overlaps, want Judge's %d", len(got.Overlaps), len(Judge(ops).Overlaps))
	}
}

func TestHolds(t *testing.T) {
	ops := []history.Op{
		acq(0, 0, 1, models.OK), acq(0, 2, 3, models.OK), rel(0, 4, 5), rel(0, 6, 7),
		acq(1, 8, 9, models.OK), {Client: 1, Kind: history.KindCrash, Call: 10 * msec, Return: 10 * msec},
		acq(2, 11, 12, models.OK),
	}
	got := holds(ops)
	want := []hold{
		{client: 0, key: "lock", start: 1 * msec, end: 6 * msec, endedBy: history.KindRelease},
		{client: 1, key: "lock", start: 9 * msec, end: 10 * msec, endedBy: history.KindCrash},
		{client: 2, key: "lock", start: 12 * msec, end: history.Last(ops), endedBy: history.KindEnd},
	}
	if len(got) != len(want) {
		t.Fatalf("holds = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("hold %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestMismatches(t *testing.T) {
	got := map[string]Verdict{CheckLock: OK, CheckResource: Illegal}
	if m := Mismatches(map[string]Verdict{CheckLock: OK}, got); len(m) != 0 {
		t.Errorf("unexpected mismatches %v", m)
	}
	m := Mismatches(map[string]Verdict{CheckLock: Illegal}, got)
	if len(m) != 1 || m[0] != "lock: got ok, expected illegal" {
		t.Errorf("mismatches = %q", m)
	}
}
