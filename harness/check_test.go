package harness

import (
	"testing"
	"time"

	"github.com/locklab/locklab/models"
)

const msec = time.Millisecond

func acq(client int, call, ret time.Duration, out models.Outcome) Op {
	return Op{Client: client, Kind: KindAcquire, Key: "lock", Call: call * msec, Return: ret * msec, Outcome: out}
}

func rel(client int, call, ret time.Duration) Op {
	return Op{Client: client, Kind: KindRelease, Key: "lock", Call: call * msec, Return: ret * msec, Outcome: models.OK}
}

func sec(client int, call, ret time.Duration, observed, written int64) Op {
	return Op{Client: client, Kind: KindSection, Call: call * msec, Return: ret * msec,
		Observed: observed, Written: written, Result: models.Wrote}
}

func endOp(at time.Duration, e End) Op {
	return Op{Client: -1, Kind: KindEnd, Call: at * msec, Return: at * msec, End: &e}
}

func TestCheckHistory(t *testing.T) {
	probeOK := End{Initial: 10, Stock: 8, Probe: true, KeyExists: false, PTTL: -2}
	tests := []struct {
		name string
		ops  []Op
		want map[string]Verdict
	}{{
		name: "two clean cycles",
		ops: []Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 5, 10, 9), rel(0, 6, 7),
			acq(1, 3, 4, models.Failed), acq(1, 8, 9, models.OK), sec(1, 10, 12, 9, 8), rel(1, 13, 14),
			endOp(20, probeOK),
		},
		want: map[string]Verdict{CheckLock: OK, CheckResource: OK, CheckLiveness: OK, CheckHandover: OK},
	}, {
		name: "lease expired: both held and both sold from 10",
		ops: []Op{
			acq(0, 0, 1, models.OK), sec(0, 2, 50, 10, 9),
			acq(1, 20, 21, models.OK), sec(1, 22, 30, 10, 9), rel(1, 31, 32),
			rel(0, 51, 52),
			endOp(60, End{Initial: 10, Stock: 9, Probe: true, PTTL: -2}),
		},
		want: map[string]Verdict{CheckLock: Illegal, CheckResource: Illegal, CheckLiveness: OK},
	}, {
		name: "crash holding, no expiry: stuck",
		ops: []Op{
			acq(0, 0, 1, models.OK), {Client: 0, Kind: KindCrash, Call: 2 * msec, Return: 2 * msec},
			acq(1, 3, 4, models.Failed),
			endOp(20, End{Initial: 10, Stock: 10, KeyExists: true, PTTL: -1, Bound: 10 * msec}),
		},
		want: map[string]Verdict{CheckLock: OK, CheckResource: OK, CheckLiveness: Stuck, CheckHandover: OK},
	}, {
		name: "crash then takeover after expiry is legal",
		ops: []Op{
			acq(0, 0, 1, models.OK), {Client: 0, Kind: KindCrash, Call: 2 * msec, Return: 2 * msec},
			acq(1, 300, 301, models.OK), rel(1, 302, 303),
			endOp(400, probeOK),
		},
		want: map[string]Verdict{CheckLock: OK, CheckLiveness: OK, CheckHandover: OK},
	}, {
		name: "holders never release: slow handovers",
		ops: []Op{
			acq(0, 0, 1, models.OK), rel(0, 5, 6),
			acq(1, 2, 300, models.OK), rel(1, 305, 306),
			acq(2, 2, 600, models.OK), rel(2, 605, 606),
			endOp(700, probeOK),
		},
		want: map[string]Verdict{CheckLock: OK, CheckHandover: Slow},
	}, {
		name: "unknown acquire changes nothing",
		ops: []Op{
			{Client: 0, Kind: KindAcquire, Key: "lock", Call: 0, Return: NeverReturned, Outcome: models.Unknown},
			acq(1, 1, 2, models.OK), rel(1, 3, 4),
			endOp(10, probeOK),
		},
		want: map[string]Verdict{CheckLock: OK, CheckLiveness: OK},
	}, {
		name: "reentrant hold, released twice, then another client",
		ops: []Op{
			acq(0, 0, 1, models.OK), acq(0, 2, 3, models.OK), rel(0, 4, 5), rel(0, 6, 7),
			acq(1, 8, 9, models.OK), rel(1, 10, 11),
			endOp(20, probeOK),
		},
		want: map[string]Verdict{CheckLock: OK},
	}, {
		name: "no end record: liveness unknown",
		ops:  []Op{acq(0, 0, 1, models.OK), rel(0, 2, 3)},
		want: map[string]Verdict{CheckLock: OK, CheckLiveness: Unknown},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckHistory(tt.ops, CheckOptions{Initial: 10}).verdicts()
			for _, m := range Mismatches(tt.want, got) {
				t.Error(m)
			}
		})
	}
}

func TestCheckDetectsFirstOverlap(t *testing.T) {
	ops := []Op{
		acq(0, 0, 1, models.OK), acq(1, 20, 21, models.OK), rel(1, 31, 32), rel(0, 51, 52),
		endOp(60, End{Probe: true}),
	}
	c := CheckHistory(ops, CheckOptions{})
	at := c.detect()
	if at == nil || *at != 21*msec {
		t.Fatalf("detect = %v, want 21ms", at)
	}
}

func TestHolds(t *testing.T) {
	ops := []Op{
		acq(0, 0, 1, models.OK), acq(0, 2, 3, models.OK), rel(0, 4, 5), rel(0, 6, 7),
		acq(1, 8, 9, models.OK), {Client: 1, Kind: KindCrash, Call: 10 * msec, Return: 10 * msec},
		acq(2, 11, 12, models.OK),
	}
	got := holds(ops)
	want := []hold{
		{client: 0, key: "lock", start: 1 * msec, end: 6 * msec, endedBy: KindRelease},
		{client: 1, key: "lock", start: 9 * msec, end: 10 * msec, endedBy: KindCrash},
		{client: 2, key: "lock", start: 12 * msec, end: end(ops), endedBy: KindEnd},
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
