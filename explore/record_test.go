package explore

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore/schedule"
	"github.com/locklab/locklab/runner"
)

// TestRecordSaysWhy: the runs file says why a run is unknown and why a
// drawn fault missed it.
func TestRecordSaysWhy(t *testing.T) {
	plan := schedule.Draw(cluster.Single, false, 1)
	for _, tc := range []struct {
		name            string
		o               outcome
		unknown, missed []string
		wantOutcome     string
	}{
		{"spoiled", outcome{unknown: true, struck: true, res: &runner.Result{Spoiled: []string{"failpoint before DEL never fired"},
			Checks: []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Unknown}}}},
			[]string{"failpoint before DEL never fired"}, nil, "unknown"},
		{"unknown check", outcome{unknown: true, struck: true, res: &runner.Result{
			Checks: []checker.Check{{Checker: checker.CheckLiveness, Verdict: checker.Unknown, Detail: "the machine ran late"}}}},
			[]string{"liveness: the machine ran late"}, nil, "unknown"},
		{"missed", outcome{res: &runner.Result{Missed: []string{"a drawn fault never came (pause, at before DEL, any client): no relay"}}},
			nil, []string{"a drawn fault never came (pause, at before DEL, any client): no relay"}, "ok"},
		{"nothing struck", outcome{res: &runner.Result{}}, nil, []string{"no drawn fault struck: the run's history records none"}, "ok"},
		{"ok", outcome{struck: true, res: &runner.Result{}}, nil, nil, "ok"},
	} {
		r := recordOf(plan, tc.o, "")
		if r.Outcome != tc.wantOutcome || !slices.Equal(r.Unknown, tc.unknown) || !slices.Equal(r.Missed, tc.missed) {
			t.Errorf("%s: %s, unknown %q, missed %q; want %s, %q, %q", tc.name, r.Outcome, r.Unknown, r.Missed, tc.wantOutcome, tc.unknown, tc.missed)
		}
	}
}
