package pitfalls_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/scenarios"
)

// expectCaught runs both variants of a pitfall in its scenario: the broken
// lock must get the verdicts its entry names, each failing one of the kind
// it names, and the fixed one must pass all. A correct lock's history (a
// fix's, the reference's) must never prove a bug of its own.
func expectCaught(t *testing.T, name string) {
	found, err := pitfalls.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	p := found[0]
	for _, c := range p.Cases() {
		t.Run(string(c.Variant)+"/"+c.Scenario, func(t *testing.T) {
			s, err := scenarios.Lookup(c.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			ref := locks.Reference(s.Topology, s.Workload.Nested)
			var res *harness.Result
			// A run the machine stalled past a TTL is unknown, not a
			// verdict on the lock, and so is a kind whose reference run
			// stalled twice; such a run is tried again, at most twice.
			for try := 1; ; try++ {
				var err error
				res, err = harness.Run(context.Background(), s, c.Locker,
					harness.Options{Dir: t.TempDir(), Lock: p.Name + "/" + string(c.Variant), Reference: ref.New})
				if err != nil {
					t.Fatal(err)
				}
				why, stalled := machineStall(res)
				if !stalled {
					why, stalled = undecided(res)
				}
				if !stalled || try == 3 {
					break
				}
				t.Logf("try %d: %s", try, why)
			}
			for _, m := range check.Mismatches(c.Expected, res.Verdicts) {
				t.Errorf("%s %s in %s: %s", p.Name, c.Variant, c.Scenario, m)
			}
			for _, ch := range res.Checks {
				if check.Failing(c.Expected[ch.Checker]) && ch.Kind != c.Kind {
					t.Errorf("%s %s in %s: %s %s is of kind %q, expected %q (%s)",
						p.Name, c.Variant, c.Scenario, ch.Checker, ch.Verdict, ch.Kind, c.Kind, ch.KindWhy)
				}
			}
			correct := []string{filepath.Join(res.Dir, harness.ReferenceDir, harness.HistoryFile)}
			if c.Variant == pitfalls.Fixed {
				correct = append(correct, filepath.Join(res.Dir, harness.HistoryFile))
			}
			for _, path := range correct {
				if why, ok := provesOwn(t, path); ok {
					t.Errorf("the history of a correct lock, %s, proves a bug of its own: %s", path, why)
				}
			}
			for _, ch := range res.Checks {
				if ch.Kind != "" || t.Failed() {
					t.Logf("%s: %s: %s; kind %q: %s", ch.Checker, ch.Verdict, ch.Detail, ch.Kind, ch.KindWhy)
				}
			}
			if res.Reference != nil {
				t.Logf("reference %s: %v", ref.Name, res.Reference)
			}
		})
	}
}

// provesOwn runs check.ProvesOwn on the history at path, if there is one.
func provesOwn(t *testing.T, path string) (string, bool) {
	ops, err := history.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return check.ProvesOwn(ops)
}

func TestSetnxExpire(t *testing.T)        { expectCaught(t, "setnx-expire") }
func TestGetsetTimestamp(t *testing.T)    { expectCaught(t, "getset-timestamp") }
func TestNoTTL(t *testing.T)              { expectCaught(t, "no-ttl") }
func TestNoRelease(t *testing.T)          { expectCaught(t, "no-release") }
func TestDelRelease(t *testing.T)         { expectCaught(t, "del-release") }
func TestGetThenDel(t *testing.T)         { expectCaught(t, "get-then-del") }
func TestNoRenewal(t *testing.T)          { expectCaught(t, "no-renewal") }
func TestNonReentrant(t *testing.T)       { expectCaught(t, "non-reentrant") }
func TestFenced(t *testing.T)             { expectCaught(t, "fenced") }
func TestRedlockRestart(t *testing.T)     { expectCaught(t, "redlock-restart") }
func TestRedlockClockJump(t *testing.T)   { expectCaught(t, "redlock-clock-jump") }
func TestRedlockPause(t *testing.T)       { expectCaught(t, "redlock-pause") }
func TestUnlockBeforeCommit(t *testing.T) { expectCaught(t, "unlock-before-commit") }
func TestFailover(t *testing.T)           { expectCaught(t, "failover") }
func TestFailoverWait(t *testing.T)       { expectCaught(t, "failover-wait") }

// machineStall finds a verdict that a stall of the machine made unknown.
func machineStall(res *harness.Result) (string, bool) {
	for _, c := range res.Checks {
		if c.Verdict == harness.Unknown && strings.Contains(c.Detail, "the machine stalled") {
			return c.Checker + ": " + c.Detail, true
		}
	}
	return "", false
}

// undecided finds a failing verdict left without a kind, because the
// reference's verdict was unknown twice.
func undecided(res *harness.Result) (string, bool) {
	for _, c := range res.Checks {
		if check.Failing(c.Verdict) && c.Kind == "" {
			return c.Checker + ": no kind: " + c.KindWhy, true
		}
	}
	return "", false
}
