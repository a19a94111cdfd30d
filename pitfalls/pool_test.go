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
// (runner.Options.Pool): each case twice, first on deployments started
// for each run, then through the pool, where every run but the pitfall's
// first takes a deployment an earlier run used, reset. Both must give the
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
				opts := runner.Options{Lock: name + "/" + string(c.Variant), Reference: ref.New}
				for _, on := range []string{"fresh", "pooled"} {
					if on == "pooled" {
						opts.Pool = pool
					}
					res := alone(t, s, c, opts)
					if late := res.Late(); late != nil {
						// Tried three times already: the machine, not the
						// deployment, decided it.
						t.Logf("%s %s on %s deployments: still late: %s", name, c.Variant, on, late.Detail)
						continue
					}
					for _, m := range misses(c, res) {
						t.Errorf("%s %s in %s, on %s deployments: %s", name, c.Variant, c.Scenario, on, m)
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
