package suite

import (
	"context"
	"errors"
	"fmt"

	"github.com/locklab/locklab/reports"

	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/scenarios"
)

// Pair is one lock of the registry through one scenario.
type Pair struct {
	Lock     string // a name locks.Lookup knows
	Scenario string // a name scenarios.Lookup knows
	// Run numbers the runs of one pair, from 1, so that a pair can be run
	// several times: run k > 1 goes into <lock>-<scenario>-run<k>, with
	// the seed Options.Seed+k-1. 0 is run 1.
	Run int
}

// Pairs runs each lock of pairs through its scenario, as Lock runs a lock
// through each scenario of its topologies: judged against the scenario's
// reference lock, into the folder <lock>-<scenario> (see Pair.Run), with the same
// parallelism, skipping, saving and index. An unknown lock or scenario, or
// a lock that does not run on the scenario's topology, is refused before
// any run.
func Pairs(ctx context.Context, pairs []Pair, opts Options) ([]reports.Run, error) {
	var todo []job
	for _, p := range pairs {
		l, err := locks.Lookup(p.Lock)
		if err != nil {
			return nil, err
		}
		s, err := scenarios.Lookup(p.Scenario)
		if err != nil {
			return nil, err
		}
		if !l.Supports(s.Topology) {
			return nil, fmt.Errorf("lock %s does not run on topology %s, scenario %s's", l.Name, s.Topology, s.Name)
		}
		if p.Run < 0 {
			return nil, fmt.Errorf("run %d of %s in %s: runs count from 1", p.Run, p.Lock, p.Scenario)
		}
		j := lockJob(l.Name, l.New, s)
		if p.Run > 1 {
			j.label += fmt.Sprintf(" (run %d)", p.Run)
			j.folder += fmt.Sprintf("-run%d", p.Run)
			j.seedOffset = int64(p.Run - 1)
		}
		todo = append(todo, j)
	}
	if len(todo) == 0 {
		return nil, errors.New("no pair to run")
	}
	if err := fits("pairs", todo, opts); err != nil {
		return nil, err
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	return runAll(ctx, todo, opts)
}
