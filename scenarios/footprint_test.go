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

// TestProgramFootprint: a program's own requests show its lock, through
// its service's relay, and the run learns it: the end names the key, the
// lease and the kind of the hold, and the requests they came from. On
// Redis, a program that prefixes its key and holds a whole-second lease
// of its own shows both in its SET; on etcd the lease comes from the
// grant's reply and the key from the Txn's put (gRPC); on ZooKeeper from
// the session's connect reply and the ephemeral node's create.
func TestProgramFootprint(t *testing.T) {
	for _, tt := range []struct {
		scenario, command string
		need              func(testing.TB)
		want              footprint.Footprint // From fields: only that they are set
	}{
		{"crash-holder", redisPy + " --prefix=app:orders: --lease-ms=1000", needRedisPy,
			footprint.Footprint{Key: "app:orders:lock", Lease: time.Second, Kind: footprint.Data}},
		{"contention-etcd", etcdPy, func(t testing.TB) { needPython(t, "etcd3", "python3-etcd3") },
			footprint.Footprint{Key: "/locklab/lock", Lease: time.Second, Kind: footprint.Session}},
		{"contention-zk", zkPy, func(t testing.TB) { needPython(t, "kazoo", "python3-kazoo") },
			footprint.Footprint{Key: "/locklab/lock", Lease: time.Second, Kind: footprint.Session}},
		{"contention-postgres", pgAdvisoryPy, func(t testing.TB) { needPython(t, "psycopg2", "python3-psycopg2") },
			footprint.Footprint{Key: "hashtext('lock')", Kind: footprint.Session}},
		{"contention-sql", getLockPHP, func(t testing.TB) { needPHP(t); needPDOMySQL(t) },
			footprint.Footprint{Key: "lock", Kind: footprint.Session}},
	} {
		t.Run(tt.scenario, func(t *testing.T) {
			tt.need(t)
			t.Parallel()
			dir := t.TempDir()
			res, err := scenarios.Run(context.Background(), tt.scenario, program.New(tt.command), runner.Options{Dir: dir, ReferenceRuns: -1})
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
			got := footprint.Footprint{Key: fp.Key, Lease: fp.Lease, Kind: fp.Kind}
			if got != tt.want || fp.From == "" || fp.KindFrom == "" || (fp.Lease > 0) != (fp.LeaseFrom != "") || len(end.Ambiguous) > 0 {
				t.Errorf("footprint %+v (ambiguous %q); want %+v, each from a request", fp, end.Ambiguous, tt.want)
			}
			t.Logf("learned: %s", fp)
		})
	}
}
