package scenarios_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/program"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// TestProgramFootprint: a program that prefixes its key and holds a
// whole-second lease of its own shows both in its SET, and the run learns
// them: the end names the key, the lease and the request they came from.
func TestProgramFootprint(t *testing.T) {
	needRedisPy(t)
	t.Parallel()
	dir := t.TempDir()
	command := redisPy + " --prefix=app:orders: --lease-ms=1000"
	res, err := scenarios.Run(context.Background(), "crash-holder", program.New(command), runner.Options{Dir: dir, ReferenceRuns: -1})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := history.ReadFile(filepath.Join(dir, runner.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ops, func(op history.Op) bool { return op.Kind == history.KindEnd })
	if i < 0 || ops[i].End.Footprint == nil {
		t.Fatalf("no footprint at the end (%s)", checksOf(res))
	}
	end := ops[i].End
	fp := *end.Footprint
	if fp.Key != "app:orders:lock" || fp.Lease != time.Second || fp.Kind != footprint.Data || fp.From == "" || len(end.Ambiguous) > 0 {
		t.Errorf("footprint %+v (ambiguous %q); want key app:orders:lock, lease 1 s, data, from a SET", fp, end.Ambiguous)
	}
	t.Logf("learned: %s", fp)
}
