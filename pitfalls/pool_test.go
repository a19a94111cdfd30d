package pitfalls_test

import (
	"testing"

	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// TestVerdictsOnWarmDeployments runs pitfalls of every service whose
// scenarios strike no server through one pool of warm deployments
// (runner.Options.Pool): each case twice, the first on a deployment
// started for it, the second on that one reset. Both must give the
// catalogue's verdicts and kinds: a reset no run can tell from fresh.
func TestVerdictsOnWarmDeployments(t *testing.T) {
	if testing.Short() {
		t.Skip("a dozen runs on every service")
	}
	for _, name := range []string{"del-release", "no-ttl", "redlock-pause", "get-lock", "advisory-session",
		"etcd-pause", "zk-pause", "memcached-get-delete"} {
		t.Run(name, func(t *testing.T) {
			found, err := pitfalls.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			pool := runner.NewPool()
			defer func() {
				if err := pool.Close(); err != nil {
					t.Error(err)
				}
			}()
			for _, c := range found[0].Cases() {
				s, err := scenarios.Lookup(c.Scenario)
				if err != nil {
					t.Fatal(err)
				}
				ref := locks.Reference(s.Topology, s.Workload.Nested)
				opts := runner.Options{Lock: name + "/" + string(c.Variant), Reference: ref.New, Pool: pool}
				for _, on := range []string{"fresh", "reused"} {
					res := alone(t, s, c, opts)
					for _, m := range misses(c, res) {
						t.Errorf("%s %s in %s, on a %s deployment: %s", name, c.Variant, c.Scenario, on, m)
					}
				}
			}
			if st := pool.Stats(); st.Reused == 0 {
				t.Errorf("no deployment reused: %+v", st)
			} else {
				t.Logf("pool: %+v", st)
			}
		})
	}
}
