package reports

import (
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/runner"
)

func TestReferenceText(t *testing.T) {
	tests := []struct {
		name string
		res  runner.Result
		want string
	}{{
		name: "the history decided: no reference ran",
		res:  runner.Result{Checks: []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Illegal, Kind: checker.Own}}},
	}, {
		name: "three runs, all ok",
		res: runner.Result{ReferenceRuns: 3, Reference: map[string]checker.Verdict{
			checker.CheckHandover: checker.OK, checker.CheckLock: checker.OK, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.OK}},
		want: "The reference lock ran 3 times in the same scenario and seed, to tell the kinds the history alone could not; " +
			"its last run: lock ok, resource ok, liveness ok, handover ok.",
	}, {
		name: "one run that failed",
		res:  runner.Result{ReferenceRuns: 1, Reference: map[string]checker.Verdict{checker.CheckResource: checker.Illegal}},
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
