package scenarios_test

import (
	"context"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// TestOneRunPerService makes one run on each lock service: its first
// topology's scenario with no fault, with the service's correct lock, and
// every verdict ok. It is what `go test -short` keeps of the servers: the
// inner loop's proof that each service starts, serves its lock and stops.
func TestOneRunPerService(t *testing.T) {
	for _, service := range cluster.Services() {
		topology := cluster.TopologiesOf(service)[0]
		var quiet string
		for _, s := range scenarios.All() {
			if s.Topology == topology && len(s.Failpoints) == 0 && len(s.Faults) == 0 && quiet == "" {
				quiet = s.Name
			}
		}
		t.Run(string(service), func(t *testing.T) {
			if quiet == "" {
				t.Fatalf("no scenario without faults on topology %s", topology)
			}
			t.Parallel()
			_, newLocker := reference.For(topology, false)
			var res *runner.Result
			for try := 1; try <= 2; try++ { // a run the machine stalled says nothing: made again
				var err error
				if res, err = scenarios.Run(context.Background(), quiet, newLocker, runner.Options{ReferenceRuns: -1}); err != nil {
					t.Fatal(err)
				}
				if res.Late() == nil {
					break
				}
			}
			for _, c := range res.Checks {
				if c.Verdict != checker.OK {
					t.Errorf("%s in %s: %s %s: %s", service, quiet, c.Checker, c.Verdict, c.Detail)
				}
			}
		})
	}
}
