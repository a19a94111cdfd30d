package explore

import (
	"context"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/service"
)

func TestMain(m *testing.M) {
	// go-redis logs every failed dial; under injected faults those are
	// expected, and the history records them.
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// benchLocks are the correct Go locks whose pace BenchmarkExploreRuns
// measures, one a topology: those of docs/performance.md's table, and the
// reference lock where it names none.
var benchLocks = []struct {
	topology cluster.Topology
	lock     string // "" means the topology's reference lock
}{
	{cluster.Single, "token-watchdog"},
	{cluster.Replicated, ""},
	{cluster.Redlock, ""},
	{cluster.MariaDBTopology, "unique-row"},
	{cluster.PostgresTopology, "advisory-pinned"},
	{cluster.EtcdTopology, "etcd-mutex-guarded"},
	{cluster.ZooKeeperTopology, "zk-fenced"},
	{cluster.MemcachedTopology, "memcached"},
}

// BenchmarkExploreRuns is the pace of exploration on each topology, with
// a correct lock (so no run stops it), runs made as many at once as check
// explore makes by default (service.Parallel): runs per minute, on warm
// deployments reused between runs (Config.Fresh false) and on fresh ones.
// Give it a few dozen runs (-benchtime 24x) for the runs at once to fill.
func BenchmarkExploreRuns(b *testing.B) {
	for _, bl := range benchLocks {
		l := locks.Reference(bl.topology, false)
		if bl.lock != "" {
			var err error
			if l, err = locks.Lookup(bl.lock); err != nil {
				b.Fatal(err)
			}
		}
		for _, fresh := range []bool{false, true} {
			name := string(bl.topology) + "/warm"
			if fresh {
				name = string(bl.topology) + "/fresh"
			}
			b.Run(name, func(b *testing.B) {
				ref := l.ReferenceOn(bl.topology)
				rep, err := Run(context.Background(), Config{Lock: l.Name, New: l.New, Reference: ref.New, SelfReference: ref.Name == l.Name,
					Topology: bl.topology, Runs: b.N, Seed: 1, Dir: b.TempDir(), Fresh: fresh,
					Parallel: service.Parallel(bl.topology, runtime.NumCPU())})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(rep.RunsPerMin, "runs/min")
				b.ReportMetric(float64(rep.Own), "own")
			})
		}
	}
}

// BenchmarkFirstOwn is how long exploration takes to find each broken
// catalogue lock, blind: the median, over b.N explorations with distinct
// seeds, of the seconds to the first own violation.
func BenchmarkFirstOwn(b *testing.B) {
	for _, l := range locks.All() {
		if l.Group() != locks.GroupBroken || !l.Supports(cluster.Single) {
			continue
		}
		b.Run(l.Name, func(b *testing.B) {
			var secs []float64
			for i := range b.N {
				rep, err := Run(context.Background(), Config{Lock: l.Name, New: l.New,
					Reference: locks.Reference(cluster.Single, l.Nested).New, Nested: l.Nested,
					Time: 2 * time.Minute, Seed: int64(i + 1), StopAtFirst: true, Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				if rep.FirstOwnS == nil {
					b.Errorf("seed %d: no own violation in 2 minutes (%d runs)", i+1, rep.Runs)
					continue
				}
				secs = append(secs, *rep.FirstOwnS)
			}
			if len(secs) > 0 {
				slices.Sort(secs)
				b.ReportMetric(secs[len(secs)/2], "s-to-own")
			}
		})
	}
}
