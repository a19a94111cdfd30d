package suite_test

import (
	"context"
	"fmt"
	"os"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/suite"
)

// An attendee's go test puts their lock through every single-node scenario
// and fails on any failure of the lock's own; the report folder holds the
// matrix in index.html, and every run's files. (Not run here: it starts
// Redis for each of a dozen scenarios.)
func ExampleLock() {
	runs, err := suite.Lock(context.Background(), "my-lock", reference.NewTokenLock,
		[]cluster.Topology{cluster.Single}, suite.Options{Out: "my-lock-report", Progress: os.Stderr})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range runs {
		if !r.Pass {
			fmt.Printf("%s: %v (kinds %v)\n", r.Name(), r.Verdicts, r.Kinds)
		}
	}
	_ = reports.WriteTable(os.Stdout, runs)
}
