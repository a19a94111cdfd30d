package check

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

func faultOn(client int, call, ret time.Duration, label string) history.Op {
	return history.Op{Client: client, Kind: history.KindFault, Call: call * msec, Return: ret * msec, Fault: label}
}

func refused(client int, call, ret time.Duration) history.Op {
	op := rel(client, call, ret)
	op.Outcome, op.Error = models.Failed, "not held"
	return op
}

func TestProvesOwn(t *testing.T) {
	end := endOp(1000, history.End{TTL: 200 * msec, Probe: true})
	tests := []struct {
		name string
		ops  []history.Op
		want string // a substring of why; "" means no proof
	}{{
		name: "clean handover",
		ops:  []history.Op{acq(0, 0, 1, models.OK), rel(0, 50, 51), acq(1, 10, 52, models.OK), rel(1, 60, 61), end},
	}, {
		name: "young unfaulted holds overlap",
		ops:  []history.Op{acq(0, 0, 1, models.OK), acq(1, 10, 20, models.OK), rel(1, 40, 41), rel(0, 50, 51), end},
		want: "1 overlap(s) of two holds that no fault touched, both younger than the 200 ms TTL: first, client 1 acquired \"lock\" at 20 ms while client 0 held it since 1 ms",
	}, {
		name: "the earlier hold is older than the TTL: its lease may have run out",
		ops:  []history.Op{acq(0, 0, 1, models.OK), acq(1, 230, 240, models.OK), rel(1, 250, 251), rel(0, 260, 261), end},
	}, {
		name: "the age counts from the acquire's call, not its return",
		ops:  []history.Op{acq(0, 0, 150, models.OK), acq(1, 195, 205, models.OK), rel(1, 210, 211), rel(0, 220, 221), end},
	}, {
		name: "a pause of the earlier holder",
		ops: []history.Op{acq(0, 0, 1, models.OK), faultOn(0, 5, 15, "client pause"),
			acq(1, 10, 20, models.OK), rel(1, 40, 41), rel(0, 50, 51), end},
	}, {
		name: "a fault on the later holder while it acquired",
		ops: []history.Op{acq(0, 0, 1, models.OK), faultOn(1, 12, 14, "reply dropped"),
			acq(1, 10, 20, models.OK), rel(1, 40, 41), rel(0, 50, 51), end},
	}, {
		name: "a fault on the whole system",
		ops: []history.Op{acq(0, 0, 1, models.OK), faultOn(-1, 5, 8, history.FaultFailover),
			acq(1, 10, 20, models.OK), rel(1, 40, 41), rel(0, 50, 51), end},
	}, {
		name: "a fault on a third client does not excuse the two",
		ops: []history.Op{faultOn(2, 0, 30, "client pause"), acq(0, 0, 1, models.OK),
			acq(1, 10, 20, models.OK), rel(1, 40, 41), rel(0, 50, 51), end},
		want: "1 overlap(s)",
	}, {
		name: "a fault that ended before the acquire",
		ops: []history.Op{faultOn(0, 0, 3, "client pause"), faultOn(-1, 0, 3, "kill lock node 2"), acq(0, 5, 6, models.OK),
			acq(1, 10, 20, models.OK), rel(1, 40, 41), rel(0, 50, 51), end},
		want: "1 overlap(s)",
	}, {
		name: "every overlap is counted",
		ops: []history.Op{acq(0, 0, 1, models.OK), acq(1, 10, 20, models.OK), acq(2, 10, 30, models.OK),
			rel(1, 40, 41), rel(2, 45, 46), rel(0, 50, 51), end},
		want: "3 overlap(s)",
	}, {
		name: "release refused to a young unfaulted holder",
		ops:  []history.Op{acq(0, 0, 1, models.OK), refused(0, 50, 51), end},
		want: "1 release(s) refused to a holder no fault touched, younger than the 200 ms TTL: someone overwrote or deleted its key; first, client 0's at 50 ms",
	}, {
		name: "release refused after the TTL",
		ops:  []history.Op{acq(0, 0, 1, models.OK), refused(0, 250, 251), end},
	}, {
		name: "release refused after a pause",
		ops:  []history.Op{acq(0, 0, 1, models.OK), faultOn(0, 10, 30, "client pause"), refused(0, 50, 51), end},
	}, {
		name: "release with an unknown outcome",
		ops: []history.Op{acq(0, 0, 1, models.OK),
			{Client: 0, Kind: history.KindRelease, Key: "lock", Call: 50 * msec, Return: history.NeverReturned, Outcome: models.Unknown}, end},
	}, {
		name: "both at once",
		ops:  []history.Op{acq(0, 0, 1, models.OK), acq(1, 10, 20, models.OK), refused(1, 40, 41), rel(0, 50, 51), end},
		want: "held it since 1 ms; 1 release(s) refused",
	}, {
		name: "no end record: no TTL to measure against",
		ops:  []history.Op{acq(0, 0, 1, models.OK), acq(1, 10, 20, models.OK), rel(1, 40, 41), rel(0, 50, 51)},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why, ok := ProvesOwn(tt.ops)
			if ok != (tt.want != "") || !strings.Contains(why, tt.want) || ok != (why != "") {
				t.Errorf("ProvesOwn = %v, %q; want proof %v containing %q", ok, why, tt.want != "", tt.want)
			}
		})
	}
}

func TestExcused(t *testing.T) {
	end := endOp(1000, history.End{TTL: 200 * msec, Probe: true})
	tests := []struct {
		name string
		ops  []history.Op
		want bool
	}{{
		name: "no overlap: nothing to excuse",
		ops:  []history.Op{acq(0, 0, 1, models.OK), rel(0, 50, 51), acq(1, 10, 52, models.OK), rel(1, 60, 61), end},
	}, {
		name: "a partitioned holder past its TTL",
		ops: []history.Op{acq(0, 0, 1, models.OK), faultOn(0, 50, 400, "partition client 0"),
			acq(1, 210, 300, models.OK), rel(1, 310, 311), rel(0, 450, 451), end},
		want: true,
	}, {
		name: "slow work is the workload's: a correct lock renews through it",
		ops: []history.Op{acq(0, 0, 1, models.OK), faultOn(0, 50, 400, history.FaultSlowWork),
			acq(1, 210, 300, models.OK), rel(1, 310, 311), rel(0, 450, 451), end},
	}, {
		name: "a struck holder still inside its TTL",
		ops: []history.Op{acq(0, 0, 1, models.OK), faultOn(0, 50, 400, "client pause"),
			acq(1, 100, 120, models.OK), rel(1, 130, 131), rel(0, 450, 451), end},
	}, {
		name: "one excused overlap, one between untouched young holders",
		ops: []history.Op{acq(0, 0, 1, models.OK), faultOn(0, 50, 400, "client pause"),
			acq(1, 210, 250, models.OK), acq(2, 260, 270, models.OK), rel(1, 310, 311), rel(2, 320, 321), rel(0, 450, 451), end},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why, ok := Excused(tt.ops)
			if ok != tt.want {
				t.Errorf("Excused = %v (%q), want %v", ok, why, tt.want)
			}
		})
	}
}
