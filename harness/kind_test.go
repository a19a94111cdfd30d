package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/scenarios"
)

func TestKinds(t *testing.T) {
	tests := []struct {
		name      string
		scenario  string
		lock      harness.NewLocker
		reference harness.NewLocker
		checker   string
		want      check.Kind
		why       string // a substring of KindWhy
		refRuns   bool   // the reference's files must be under reference/
		// referenceRuns is Options.ReferenceRuns: negative asks for no
		// reference run.
		referenceRuns int
	}{{
		// Holders that never release make handovers slow; the token
		// lock, which releases, does not.
		name: "reference ok: own", scenario: "contention", lock: pitfalls.NewNoRelease, reference: pitfalls.NewTokenLock,
		checker: check.CheckHandover, want: check.Own, why: "the reference lock stays ok", refRuns: true,
	}, {
		// No reference given: the topology's (the watchdog token lock)
		// stands in, and tells the same.
		name: "reference of the topology by default: own", scenario: "contention", lock: pitfalls.NewNoRelease,
		checker: check.CheckHandover, want: check.Own, why: "the reference lock stays ok", refRuns: true,
	}, {
		// A caller that wants no reference run says so, and the failure
		// no history explains stays untold.
		name: "no reference run: untold", scenario: "contention", lock: pitfalls.NewNoRelease, referenceRuns: -1,
		checker: check.CheckHandover, want: "", why: "no reference run",
	}, {
		// The reference is the lock itself: a node restarted empty beats it
		// too, inside the holder's lease, so only the reference can tell.
		name: "reference fails too: inherent", scenario: "redlock-restart", lock: pitfalls.NewRedlock, reference: pitfalls.NewRedlock,
		checker: check.CheckLock, want: check.Inherent, why: "a restart of a lock node beats any lock of this kind", refRuns: true,
	}, {
		// The holder was paused past its lease: the history excuses any
		// lock, so no reference is needed.
		name: "excused by the history: inherent", scenario: "pause-holder", lock: pitfalls.NewWatchdogLock, reference: pitfalls.NewWatchdogLock,
		checker: check.CheckLock, want: check.Inherent, why: "a client pause beats any lock of this kind; remedy: fencing tokens",
	}, {
		// The history alone proves a plain DEL freed another's lock, so no
		// reference is needed.
		name: "proved by the history: own", scenario: "pause-before-del", lock: pitfalls.NewDelRelease,
		checker: check.CheckLock, want: check.Own, why: "no correct lock shows this",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenarios.Lookup(tt.scenario)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			res, err := harness.Run(context.Background(), s, tt.lock, harness.Options{Dir: dir, Reference: tt.reference, ReferenceRuns: tt.referenceRuns})
			if err != nil {
				t.Fatal(err)
			}
			got := kindOf(res.Checks, tt.checker)
			switch {
			case got.Verdict == check.Unknown:
				t.Skipf("%s unknown, nothing to classify: %s", tt.checker, got.Detail)
			case !check.Failing(got.Verdict):
				t.Fatalf("%s %s: the scenario no longer catches the lock (%s)", tt.checker, got.Verdict, got.Detail)
			}
			if got.Kind != tt.want || !strings.Contains(got.KindWhy, tt.why) {
				t.Errorf("%s %s: kind %q (%s), want %q with %q", tt.checker, got.Verdict, got.Kind, got.KindWhy, tt.want, tt.why)
			}
			for _, c := range res.Checks {
				if !check.Failing(c.Verdict) && (c.Kind != "" || c.KindWhy != "") {
					t.Errorf("%s %s has kind %q (%s)", c.Checker, c.Verdict, c.Kind, c.KindWhy)
				}
			}

			var saved harness.Result
			b, err := os.ReadFile(filepath.Join(dir, harness.ResultFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &saved); err != nil {
				t.Fatal(err)
			}
			if k := kindOf(saved.Checks, tt.checker); k.Kind != got.Kind || k.KindWhy != got.KindWhy {
				t.Errorf("%s holds kind %q (%s), the result %q", harness.ResultFile, k.Kind, k.KindWhy, got.Kind)
			}

			_, err = os.Stat(filepath.Join(dir, harness.ReferenceDir, harness.HistoryFile))
			switch {
			case tt.refRuns && err != nil:
				t.Errorf("no reference history: %v", err)
			case !tt.refRuns && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("the reference ran though the history decided: %v", err)
			case tt.refRuns && saved.Reference[tt.checker] == "":
				t.Errorf("%s holds no reference verdicts: %v", harness.ResultFile, saved.Reference)
			}
		})
	}
}

func kindOf(checks []check.Check, checker string) check.Check {
	for _, c := range checks {
		if c.Checker == checker {
			return c
		}
	}
	return check.Check{}
}
