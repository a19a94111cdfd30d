package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/broken"
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

func TestKinds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers: the full tier (make test)")
	}
	tests := []struct {
		name        string
		scenario    string
		lock        harness.NewLocker
		reference   harness.NewLocker
		checkerName string
		want        checker.Kind
		why         string // a substring of KindWhy
		refRuns     int    // how many times the reference must have run
		// referenceRuns is Options.ReferenceRuns: negative asks for no
		// reference run.
		referenceRuns int
		// selfReference is Options.SelfReference.
		selfReference bool
	}{{
		// Holders that never release make handovers slow; the token
		// lock, which releases, does not, in any of its runs.
		name: "reference ok in every run: own", scenario: "contention", lock: broken.NewNoRelease, reference: reference.NewTokenLock,
		checkerName: checker.CheckHandover, want: checker.Own, why: "the reference lock stays ok in 3 of 3 runs", refRuns: 3,
	}, {
		// No reference given: the topology's (the watchdog token lock)
		// stands in, and tells the same.
		name: "reference of the topology by default: own", scenario: "contention", lock: broken.NewNoRelease,
		checkerName: checker.CheckHandover, want: checker.Own, why: "the reference lock stays ok in 3 of 3 runs", refRuns: 3,
	}, {
		// A caller that wants no reference run says so, and the failure
		// no history explains stays untold.
		name: "no reference run: untold", scenario: "contention", lock: broken.NewNoRelease, referenceRuns: -1,
		checkerName: checker.CheckHandover, want: "", why: "no reference run",
	}, {
		// A lock that is its own reference: reference runs that stay ok
		// only raced differently, and prove nothing (here a correct lock
		// stands in for the lock's own runs, so that they stay ok).
		name: "own reference ok: untold", scenario: "contention", lock: broken.NewNoRelease, reference: reference.NewTokenLock, selfReference: true,
		checkerName: checker.CheckHandover, want: "", why: "the lock is its own reference: the reference lock stays ok in 3 of 3 runs", refRuns: 3,
	}, {
		// Releasing before the commit loses updates without any overlap
		// of holders: the history cannot tell, the reference (the same
		// lock) fails at once, and the runs stop there.
		name: "reference fails too: inherent", scenario: "unlock-before-commit", lock: reference.NewWatchdogLock, reference: reference.NewWatchdogLock,
		checkerName: checker.CheckResource, want: checker.Inherent, why: "the reference lock is illegal too in run 1", refRuns: 1,
	}, {
		// A node restarted empty while client 0's young lease was on it
		// explains the overlap: no reference is needed.
		name: "a loss explains the overlap: inherent", scenario: "redlock-restart", lock: reference.NewRedlock, reference: reference.NewRedlock,
		checkerName: checker.CheckLock, want: checker.Inherent, why: "node 2 lost client 0's key to \"lock node 2 restarted empty (every key it held is lost)\"",
	}, {
		// The holder was paused past its lease: the history excuses any
		// lock, so no reference is needed.
		name: "a stall explains the overlap: inherent", scenario: "pause-holder", lock: reference.NewWatchdogLock, reference: reference.NewWatchdogLock,
		checkerName: checker.CheckLock, want: checker.Inherent, why: "a client pause beats any lock of this kind; remedy: fencing tokens",
	}, {
		// The history alone proves a plain DEL freed another's lock, so no
		// reference is needed.
		name: "proved by the history: own", scenario: "pause-before-del", lock: broken.NewDelRelease,
		checkerName: checker.CheckLock, want: checker.Own, why: "no correct lock shows this",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenarios.Lookup(tt.scenario)
			if err != nil {
				t.Fatal(err)
			}
			// These runs share the machine with the race detector and other
			// packages' tests: a Redlock restart whose window the load let
			// pass unseen is tried again, at most twice, as the pitfalls'
			// tests retry a stalled run.
			var res *runner.Result
			var got checker.Check
			dir := ""
			for try := 1; ; try++ {
				var err error
				dir = t.TempDir()
				res, err = runner.Run(context.Background(), s, tt.lock, runner.Options{Dir: dir, Reference: tt.reference, ReferenceRuns: tt.referenceRuns,
					SelfReference: tt.selfReference})
				if err != nil {
					t.Fatal(err)
				}
				if got = kindOf(res.Checks, tt.checkerName); checker.Failing(got.Verdict) || try == 3 {
					break
				}
				t.Logf("try %d: %s %s (%s)", try, tt.checkerName, got.Verdict, got.Detail)
			}
			switch {
			case got.Verdict == checker.Unknown:
				t.Skipf("%s unknown, nothing to classify: %s", tt.checkerName, got.Detail)
			case !checker.Failing(got.Verdict):
				t.Fatalf("%s %s: the scenario no longer catches the lock (%s)", tt.checkerName, got.Verdict, got.Detail)
			}
			if got.Kind != tt.want || !strings.Contains(got.KindWhy, tt.why) {
				t.Errorf("%s %s: kind %q (%s), want %q with %q", tt.checkerName, got.Verdict, got.Kind, got.KindWhy, tt.want, tt.why)
			}
			for _, c := range res.Checks {
				if !checker.Failing(c.Verdict) && (c.Kind != "" || c.KindWhy != "") {
					t.Errorf("%s %s has kind %q (%s)", c.Checker, c.Verdict, c.Kind, c.KindWhy)
				}
			}

			var saved runner.Result
			b, err := os.ReadFile(filepath.Join(dir, runner.ResultFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &saved); err != nil {
				t.Fatal(err)
			}
			if k := kindOf(saved.Checks, tt.checkerName); k.Kind != got.Kind || k.KindWhy != got.KindWhy {
				t.Errorf("%s holds kind %q (%s), the result %q", runner.ResultFile, k.Kind, k.KindWhy, got.Kind)
			}

			// The classifier reads what each fault can do from the history.
			ops, err := history.ReadFile(filepath.Join(dir, runner.HistoryFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range ops {
				if op.Kind == history.KindFault && op.Effect == "" {
					t.Errorf("fault %q at %s was recorded without its effect", op.Fault, op.Call)
				}
			}

			_, err = os.Stat(filepath.Join(dir, runner.ReferenceDir, runner.HistoryFile))
			switch {
			case tt.refRuns > 0 && err != nil:
				t.Errorf("no reference history: %v", err)
			case tt.refRuns == 0 && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("the reference ran though the history decided: %v", err)
			case tt.refRuns > 0 && saved.Reference[tt.checkerName] == "":
				t.Errorf("%s holds no reference verdicts: %v", runner.ResultFile, saved.Reference)
			}
			if saved.ReferenceRuns != tt.refRuns {
				t.Errorf("%s says the reference ran %d times, want %d", runner.ResultFile, saved.ReferenceRuns, tt.refRuns)
			}
		})
	}
}

func kindOf(checks []checker.Check, checkerName string) checker.Check {
	for _, c := range checks {
		if c.Checker == checkerName {
			return c
		}
	}
	return checker.Check{}
}
