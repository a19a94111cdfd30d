package reports

import (
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/harness"
)

func TestReferenceText(t *testing.T) {
	tests := []struct {
		name string
		res  harness.Result
		want string
	}{{
		name: "the history decided: no reference ran",
		res:  harness.Result{Checks: []check.Check{{Checker: harness.CheckLock, Verdict: harness.Illegal, Kind: check.Own}}},
	}, {
		name: "three runs, all ok",
		res: harness.Result{ReferenceRuns: 3, Reference: map[string]harness.Verdict{
			harness.CheckHandover: harness.OK, harness.CheckLock: harness.OK, harness.CheckResource: harness.OK, harness.CheckLiveness: harness.OK}},
		want: "The reference lock ran 3 times in the same scenario and seed, to tell the kinds the history alone could not; " +
			"its last run: lock ok, resource ok, liveness ok, handover ok.",
	}, {
		name: "one run that failed",
		res:  harness.Result{ReferenceRuns: 1, Reference: map[string]harness.Verdict{harness.CheckResource: harness.Illegal}},
		want: "The reference lock ran 1 time in the same scenario and seed, to tell the kinds the history alone could not; its last run: resource illegal.",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fromResult(&tt.res)
			if got := r.referenceText(); got != tt.want {
				t.Errorf("referenceText = %q, want %q", got, tt.want)
			}
		})
	}
}
