package runner_test

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/runner"
)

// TestValidateFaults: a fault that cannot strike the scenario's topology,
// scheduled or at a failpoint, is refused in one line before the run; one
// that can is taken.
func TestValidateFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     runner.Scenario
		wants string // "" for no error
	}{
		{"evict on redis", runner.Scenario{Name: "x", Topology: cluster.Single,
			Faults: []runner.ScheduledFault{{Fault: fault.Evict{}}}}, "cannot strike topology single"},
		{"evict on memcached", runner.Scenario{Name: "x", Topology: cluster.MemcachedTopology,
			Faults: []runner.ScheduledFault{{Fault: fault.Evict{}}}}, ""},
		{"clock jump at a failpoint on etcd", runner.Scenario{Name: "x", Topology: cluster.EtcdTopology,
			Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Action: failpoint.Inject(fault.ClockJump{}, 0)}}}, "kind clock-jump"},
		{"kill-connection off SQL", runner.Scenario{Name: "x",
			Faults: []runner.ScheduledFault{{Fault: fault.KillConnection{}}}}, "only services"},
		{"partition anywhere", runner.Scenario{Name: "x", Topology: cluster.EtcdTopology,
			Faults: []runner.ScheduledFault{{Fault: fault.Partition{}}}}, ""},
	} {
		err := tc.s.Validate()
		switch {
		case tc.wants == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wants != "" && (err == nil || !strings.Contains(err.Error(), tc.wants) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v, want one line with %q", tc.name, err, tc.wants)
		}
	}
}
