package scenarios_test

import (
	"context"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// TestSharedPoolCorrectLocks: the correct locks of Redis (the token lock
// with watchdog) and memcached (add + cas), their clients the request
// threads of one service that share a pool smaller than its waiters
// (pool, pool-memcached), stay ok on every checker: they wait for the
// lock by retrying, so no waiter keeps a connection from the holder.
func TestSharedPoolCorrectLocks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ lock, scenario string }{
		{"token-watchdog", "pool"},
		{"memcached", "pool-memcached"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			l, err := locks.Lookup(tc.lock)
			if err != nil {
				t.Fatal(err)
			}
			var res *runner.Result
			for try := 1; try <= 3; try++ { // a run the machine stalls is unknown: made again
				if res, err = scenarios.Run(context.Background(), tc.scenario, l.New, runner.Options{Lock: tc.lock}); err != nil {
					t.Fatal(err)
				}
				if verdictOf(res, check.CheckLiveness).Verdict != check.Unknown && verdictOf(res, check.CheckLock).Verdict != check.Unknown {
					break
				}
			}
			for _, name := range []string{check.CheckLock, check.CheckResource, check.CheckLiveness} {
				if c := verdictOf(res, name); c.Verdict != check.OK {
					t.Errorf("%s in %s: %s %s (%s); want ok", tc.lock, tc.scenario, name, c.Verdict, c.Detail)
				}
			}
			if res.Stats.Acquires < 10 {
				t.Errorf("%s in %s: %d acquires; want the clients to take turns through the shared pool", tc.lock, tc.scenario, res.Stats.Acquires)
			}
		})
	}
}
