package pitfalls_test

import (
	"context"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/scenarios"
)

// expectCaught runs both variants of a pitfall in its scenario: the broken
// lock must get the verdicts its entry names, the fixed one must pass all.
func expectCaught(t *testing.T, name string) {
	found, err := pitfalls.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	p := found[0]
	for _, c := range p.Cases() {
		t.Run(string(c.Variant)+"/"+c.Scenario, func(t *testing.T) {
			var res *harness.Result
			// A run the machine stalled past a TTL is unknown, not a
			// verdict on the lock; such a run is tried again, as its
			// reason says, at most twice.
			for try := 1; ; try++ {
				var err error
				res, err = scenarios.Run(context.Background(), c.Scenario, c.Locker,
					harness.Options{Dir: t.TempDir(), Lock: p.Name + "/" + string(c.Variant)})
				if err != nil {
					t.Fatal(err)
				}
				why, stalled := machineStall(res)
				if !stalled || try == 3 {
					break
				}
				t.Logf("try %d: %s", try, why)
			}
			for _, m := range check.Mismatches(c.Expected, res.Verdicts) {
				t.Errorf("%s %s in %s: %s", p.Name, c.Variant, c.Scenario, m)
			}
			if t.Failed() {
				for _, c := range res.Checks {
					t.Logf("%s: %s: %s", c.Checker, c.Verdict, c.Detail)
				}
			}
		})
	}
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
