package scenarios_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// TestLostReplyZooKeeper runs lost-acquire-reply-zk, check compare's
// lost-reply cell of the ZooKeeper rows, on a real ensemble. The Go locks'
// requests pass the same jute relay as a program's, so the crux strikes:
// the reply to client 0's create is dropped, and the connection with it.
// go-zookeeper's protected create looks for its node once the connection
// is back (Children), but that request is struck in turn (it is the first
// request of client 0's next acquire), and Lock then returns its error and
// leaves the node: queued, then holding the lock for nobody, as long as
// client 0's session lives, which it does. The recipe and its fenced twin
// stay exclusive and are stuck; zk-lock is its own reference, so the stall
// is inherent by the runner's rule.
func TestLostReplyZooKeeper(t *testing.T) {
	t.Parallel()
	s, err := scenarios.Lookup("lost-acquire-reply-zk")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]check.Verdict{check.CheckLock: check.OK, check.CheckResource: check.OK, check.CheckLiveness: check.Stuck}
	for _, name := range []string{"zk-lock", "zk-fenced"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l, err := locks.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			var res *runner.Result
			expect(t, func() (missed []string) {
				res, err = runner.Run(context.Background(), s, l.New, runner.Options{Lock: name, Dir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Missed) > 0 {
					return []string{fmt.Sprintf("the crux missed: %q", res.Missed)}
				}
				for checker, v := range want {
					if got := verdictOf(res, checker); got.Verdict != v {
						missed = append(missed, fmt.Sprintf("%s: %s (%s); want %s", checker, got.Verdict, got.Detail, v))
					}
				}
				return missed
			})
			st := verdictOf(res, check.CheckLiveness)
			if st.Verdict == check.Stuck && st.Kind != check.Inherent {
				t.Errorf("liveness stuck is %q (%s), want inherent: the recipe is its own reference", st.Kind, st.KindWhy)
			}
			t.Logf("liveness: %s; %s", st.Detail, st.KindWhy)
		})
	}
}
