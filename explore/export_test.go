package explore

import (
	"context"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/runner"
)

// RunWith is Run with run in place of runner.Run, for the tests of
// package explore_test.
func RunWith(ctx context.Context, cfg Config, run func(context.Context, runner.Scenario, harness.NewLocker, runner.Options) (*runner.Result, error)) (*Report, error) {
	cfg.run = run
	return Run(ctx, cfg)
}

// SlowSectionIsOwn is slowSectionIsOwn, for the tests of package
// explore_test.
var SlowSectionIsOwn = slowSectionIsOwn
