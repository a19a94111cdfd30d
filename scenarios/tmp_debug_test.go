package scenarios_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/locks"
)

func TestTmpDebug(t *testing.T) {
	name := os.Getenv("L")
	for i, l := range blindLocks {
		if l.name != name {
			continue
		}
		_ = i
		rep, err := explore.Run(context.Background(), explore.Config{Lock: l.name, New: l.new,
			Reference: locks.Reference(l.topology, false).New, Topology: l.topology, Faults: []string{os.Getenv("F")},
			Runs: 4, Seed: 1, Dir: "/tmp/dbg", KeepGoing: true, Progress: os.Stdout})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", rep)
		_ = time.Second
	}
}
