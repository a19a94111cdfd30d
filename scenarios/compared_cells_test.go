package scenarios_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster/local/proc"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// TestComparedCells runs two of check compare's cells on real servers,
// with the rows' locks, and checks their verdicts; each lock is its
// topology's reference, so what fails is inherent by the runner's rule.
//
// lost-acquire-reply-zk: the Go locks' requests pass the same jute relay
// as a program's, so the crux strikes: the reply to client 0's create is
// dropped, and the connection with it. go-zookeeper's protected create
// looks for its node once the connection is back (Children), but that
// request is struck in turn (it is the first request of client 0's next
// acquire), and Lock then returns its error and leaves the node. The
// lock's giveUp deletes that node, trying past the acquire's timeout for
// as long as the session lives, as kazoo's Lock cleans up, so that a lost
// reply costs a stall of one timeout and no lock is held for nobody: the
// recipe and its fenced twin pass, as kazoo's program does.
//
// clock-jump-memcached: the server's clocks jump 10 s under the holder
// (libfaketime, its monotonic clock included): the held item expires at
// the next tick, another client adds it, and two hold the lock.
func TestComparedCells(t *testing.T) {
	t.Parallel()
	ok := map[string]checker.Verdict{checker.CheckLock: checker.OK, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.OK}
	twoHolders := map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal}
	for _, tc := range []struct {
		scenario, lock string
		want           map[string]checker.Verdict
		faketime       bool // the scenario needs libfaketime
	}{
		{"lost-acquire-reply-zk", "zk-lock", ok, false},
		{"lost-acquire-reply-zk", "zk-fenced", ok, false},
		{"clock-jump-memcached", "memcached", twoHolders, true},
	} {
		t.Run(tc.scenario+"/"+tc.lock, func(t *testing.T) {
			t.Parallel()
			if tc.faketime && proc.Libfaketime() == "" {
				t.Skip("libfaketime is not installed (make deps installs faketime)")
			}
			s, err := scenarios.Lookup(tc.scenario)
			if err != nil {
				t.Fatal(err)
			}
			l, err := locks.Lookup(tc.lock)
			if err != nil {
				t.Fatal(err)
			}
			var res *runner.Result
			expect(t, func() (missed []string) {
				res, err = runner.Run(context.Background(), s, l.New, runner.Options{Lock: tc.lock, Dir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Spoiled) > 0 || len(res.Missed) > 0 {
					return []string{fmt.Sprintf("spoiled %q, the crux missed %q", res.Spoiled, res.Missed)}
				}
				for checkerName, v := range tc.want {
					if got := verdictOf(res, checkerName); got.Verdict != v {
						missed = append(missed, fmt.Sprintf("%s: %s (%s); want %s", checkerName, got.Verdict, got.Detail, v))
					}
				}
				return missed
			})
			for checkerName, v := range tc.want {
				got := verdictOf(res, checkerName)
				if v != checker.OK && got.Verdict == v && got.Kind != checker.Inherent {
					t.Errorf("%s %s is %q (%s), want inherent: the lock is its own reference", checkerName, got.Verdict, got.Kind, got.KindWhy)
				}
				t.Logf("%s: %s: %s", checkerName, got.Verdict, got.Detail)
			}
		})
	}
}
