package reports

import (
	"testing"
)

// TestOutcome: the end of a progress line says how each kind of run turned
// out: a catalogue case as expected or not, a lock run with or without
// failures of its own, and either kind spoiled or skipped.
func TestOutcome(t *testing.T) {
	dir := t.TempDir()
	cat, odd, lock := testRuns(t, dir), oddRuns(t, dir), lockRuns(t, dir)
	missed := func(r Run) Run {
		r.Missed = []string{"every acquire was refused"}
		return r
	}
	tests := []struct {
		r    Run
		want string
	}{
		{cat[0], "as expected (2.345s)\n"},
		{missed(cat[0]), "as expected (2.345s)\n    missed: every acquire was refused\n"},
		{cat[1], "NOT as expected: liveness: got stuck, expected ok (2.345s)\n"},
		{missed(cat[1]), "NOT as expected: liveness: got stuck, expected ok (2.345s)\n"},
		{odd[0], "spoiled (2.345s)\n    spoiled: failpoint after-setnx never fired\n"},
		{odd[1], "skipped: MariaDB not found: run `make deps`\n"},
		{lock[0], "no own failures (2.345s)\n"},
		{missed(lock[0]), "no own failures (2.345s)\n    missed: every acquire was refused\n"},
		{lock[1], "no own failures; inherent: lock illegal (2.345s)\n"},
		{missed(lock[1]), "no own failures; inherent: lock illegal (2.345s)\n"},
		{lock[2], "own failures: lock illegal, resource illegal (untold) (2.345s)\n"},
		{missed(lock[2]), "own failures: lock illegal, resource illegal (untold) (2.345s)\n    missed: every acquire was refused\n"},
		{lock[3], "unknown verdicts: resource (2.345s)\n"},
		{lock[4], "spoiled (2.345s)\n    spoiled: failpoint critical-section never fired\n"},
		{lock[5], "skipped: MariaDB not found: run `make deps`\n"},
	}
	for _, tt := range tests {
		if got := tt.r.Outcome(); got != tt.want {
			t.Errorf("%s: outcome %q, want %q", tt.r.Name(), got, tt.want)
		}
	}
}
