package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

func TestByReference(t *testing.T) {
	illegal := &checker.Check{Checker: checker.CheckLock, Verdict: checker.Illegal}
	stuck := &checker.Check{Checker: checker.CheckLiveness, Verdict: checker.Stuck}
	tests := []struct {
		name        string
		checker     string
		unexplained int
		tally       tally
		want        checker.Kind
		why         string // a substring of the reason
		noFault     bool   // the scenario injects no fault
	}{{
		name: "liveness fails in the reference too, with no fault", checker: checker.CheckLiveness, tally: tally{runs: 1, failed: stuck},
		noFault: true, why: "the reference lock is stuck too in run 1 of the same scenario and seed, with no fault injected",
	}, {
		name: "ok in every run", checker: checker.CheckLock, unexplained: 4, tally: tally{runs: 3, ok: 3},
		want: checker.Own, why: "the reference lock stays ok in 3 of 3 runs of the same scenario and seed",
	}, {
		name: "ok in every run but one unknown", checker: checker.CheckHandover, tally: tally{runs: 3, ok: 2, unknown: "the machine stalled"},
		why: "stays ok in only 2 of 3 runs of the same scenario and seed, the others unknown (the machine stalled)",
	}, {
		name: "an unknown run made up by one more", checker: checker.CheckLiveness, tally: tally{runs: 4, ok: 3, unknown: "stalled"},
		want: checker.Own, why: "stays ok in 3 of 4 runs",
	}, {
		name: "liveness fails in the reference too", checker: checker.CheckLiveness, tally: tally{runs: 2, ok: 1, failed: stuck},
		want: checker.Inherent, why: "the reference lock is stuck too in run 2 of the same scenario and seed: a client pause beats any lock",
	}, {
		name: "a resource failure without overlaps", checker: checker.CheckResource, tally: tally{runs: 1, failed: illegal},
		want: checker.Inherent, why: "the reference lock is illegal too in run 1",
	}, {
		name: "far more unexplained overlaps than the reference shows", checker: checker.CheckLock, unexplained: 70,
		tally: tally{runs: 1, failed: illegal, overlaps: 2},
		want:  checker.Own, why: "70 overlaps none of which a fault explains; the reference lock shows 2 under the same schedule",
	}, {
		name: "three times as many, but fewer than ten more", checker: checker.CheckLock, unexplained: 8,
		tally: tally{runs: 1, failed: illegal, overlaps: 2},
		why:   "8 overlap(s) none of which a fault explains, and the reference lock is illegal too in run 1 of the same scenario and seed with 2",
	}, {
		name: "ten more, but not three times as many", checker: checker.CheckResource, unexplained: 40,
		tally: tally{runs: 3, ok: 2, failed: illegal, overlaps: 20},
		why:   "not enough beyond it",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fault, cure := "a client pause", "fencing tokens checked by the resource"
			if tt.noFault {
				fault, cure = "", ""
			}
			kind, why := byReference(tt.checker, tt.unexplained, tt.tally, 3, fault, cure)
			if kind != tt.want || !strings.Contains(why, tt.why) {
				t.Errorf("byReference = %q (%s), want %q with %q", kind, why, tt.want, tt.why)
			}
		})
	}
}

// TestClassifyFromHistory runs classify with no reference run allowed, so
// that whatever it decides it decides from the history alone.
func TestClassifyFromHistory(t *testing.T) {
	const ms = time.Millisecond
	acq := func(client int, call, ret time.Duration) history.Op {
		return history.Op{Client: client, Kind: history.KindAcquire, Key: "lock", Call: call * ms, Return: ret * ms, Outcome: models.OK}
	}
	rel := func(client int, call time.Duration) history.Op {
		return history.Op{Client: client, Kind: history.KindRelease, Key: "lock", Call: call * ms, Return: call*ms + ms, Outcome: models.OK}
	}
	faultOp := func(client int, call, ret time.Duration, label string, e history.Effect) history.Op {
		return history.Op{Client: client, Kind: history.KindFault, Call: call * ms, Return: ret * ms, Fault: label, Effect: e}
	}
	end := history.Op{Client: -1, Kind: history.KindEnd, Call: 1000 * ms, Return: 1000 * ms, End: &history.End{TTL: 300 * ms}}
	restart := Scenario{Name: "restart", Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Action: failpoint.Inject(fault.KillNode{Node: 2}, 0)}}}
	tests := []struct {
		name     string
		scenario Scenario
		ops      []history.Op
		checks   []checker.Check
		want     []checker.Kind // the kind of each check
		why      string         // a substring of the first check's reason
	}{{
		name:     "a proved overlap makes both safety verdicts own",
		scenario: restart,
		ops:      []history.Op{acq(0, 0, 2), acq(1, 0, 3), rel(0, 20), rel(1, 20), end},
		checks:   []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Illegal}, {Checker: checker.CheckResource, Verdict: checker.Illegal}},
		want:     []checker.Kind{checker.Own, checker.Own},
		why:      "no correct lock shows this: 1 overlap(s)",
	}, {
		name:     "a node restarted inside a young hold: inherent, with the remedy",
		scenario: restart,
		ops: []history.Op{acq(0, 10, 20), faultOp(-1, 30, 40, "lock node 2 restarted empty", history.EffectLoss),
			acq(1, 35, 50), rel(1, 60), rel(0, 120), end},
		checks: []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Illegal}},
		want:   []checker.Kind{checker.Inherent},
		why:    "a restart of a lock node beats any lock of this kind; remedy: restart a node only after a TTL",
	}, {
		name:     "an unexplained overlap stays untold without a reference run",
		scenario: restart,
		ops:      []history.Op{acq(0, 0, 2), faultOp(0, 5, 400, history.FaultSlowWork, history.EffectWork), acq(1, 350, 360), rel(1, 370), rel(0, 410), end},
		checks:   []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Illegal}, {Checker: checker.CheckLiveness, Verdict: checker.OK}},
		want:     []checker.Kind{"", ""},
		why:      "no reference run was asked for",
	}, {
		name:     "liveness is never told from the history",
		scenario: restart,
		ops:      []history.Op{acq(0, 0, 2), acq(1, 0, 3), rel(0, 20), rel(1, 20), end},
		checks:   []checker.Check{{Checker: checker.CheckLiveness, Verdict: checker.Stuck}},
		want:     []checker.Kind{""},
		why:      "no reference run was asked for",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &Result{Checks: tt.checks}
			if err := classify(context.Background(), tt.scenario, Options{ReferenceRuns: -1}, res, tt.ops, checker.Result{}); err != nil {
				t.Fatal(err)
			}
			for i, c := range res.Checks {
				if c.Kind != tt.want[i] {
					t.Errorf("%s %s: kind %q (%s), want %q", c.Checker, c.Verdict, c.Kind, c.KindWhy, tt.want[i])
				}
				if !checker.Failing(c.Verdict) && c.KindWhy != "" {
					t.Errorf("%s %s has a reason: %s", c.Checker, c.Verdict, c.KindWhy)
				}
			}
			if why := res.Checks[0].KindWhy; !strings.Contains(why, tt.why) {
				t.Errorf("reason %q, want one containing %q", why, tt.why)
			}
			if res.ReferenceRuns != 0 || res.Reference != nil {
				t.Errorf("reference ran %d times: %v", res.ReferenceRuns, res.Reference)
			}
		})
	}
}

// TestReferenceByKind: with ReferenceOf, the reference is chosen by the
// kind of the lock's hold, -kind over what its requests showed; requests
// that showed contradictory things leave no reference to compare with.
func TestReferenceByKind(t *testing.T) {
	lockers := make([]harness.NewLocker, 3)
	for i := range lockers {
		lockers[i] = func(*harness.Client) harness.Locker { _ = i; return nil }
	}
	session, data, given := lockers[0], lockers[1], lockers[2]
	of := func(k footprint.Kind) harness.NewLocker {
		if k == footprint.Session {
			return session
		}
		return data
	}
	same := func(a, b harness.NewLocker) bool { return fmt.Sprintf("%p", a) == fmt.Sprintf("%p", b) }
	learned := func(k footprint.Kind) *history.End {
		return &history.End{Footprint: &footprint.Footprint{Key: "lock", Kind: k}}
	}
	for _, tc := range []struct {
		name string
		opts Options
		end  *history.End
		want harness.NewLocker
		no   bool
	}{
		{"no ReferenceOf: as given", Options{Reference: given}, learned(footprint.Session), given, false},
		{"learned session", Options{Reference: given, ReferenceOf: of}, learned(footprint.Session), session, false},
		{"learned data", Options{Reference: given, ReferenceOf: of}, learned(footprint.Data), data, false},
		{"nothing learned", Options{Reference: given, ReferenceOf: of}, &history.End{}, given, false},
		{"-kind over learned", Options{Reference: given, ReferenceOf: of, Kind: footprint.Data}, learned(footprint.Session), data, false},
		{"contradictory", Options{Reference: given, ReferenceOf: of}, &history.End{Ambiguous: []string{"kind: session, then data"}}, given, true},
	} {
		got, no := referenceByKind(tc.opts, tc.end)
		if !same(got.Reference, tc.want) || (no != "") != tc.no {
			t.Errorf("%s: reference %p, no %q; want %p, no %v", tc.name, got.Reference, no, tc.want, tc.no)
		}
	}
}

// TestRemedyOfASharedPool: a small-pool scenario's fault is its pool, so
// that a stuck lock whose reference is stuck too under it (GET_LOCK, whose
// waiters hold pooled connections) is inherent and says why; a scenario
// with no fault and no pool names none.
func TestRemedyOfASharedPool(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Scenario
		want string
	}{
		{"a small pool", Scenario{Workload: Workload{Pool: 3}}, sharedPool},
		{"no fault, no pool", Scenario{}, ""},
		{"pitfall 8", Scenario{Workload: Workload{ReleaseBeforeCommit: true}}, earlyRelease},
	} {
		if got, _ := remedy(tc.s); got != tc.want {
			t.Errorf("%s: remedy %q, want %q", tc.name, got, tc.want)
		}
	}
}
