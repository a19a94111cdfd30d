package scenarios_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/program"
	"github.com/locklab/locklab/service"
)

// BenchmarkProgramStart is what a lock program costs a client: start the
// process and take and give back the lock once, against the same first
// cycle of the Go lock of its design, per service.
func BenchmarkProgramStart(b *testing.B) {
	goLock := func(name string) func(testing.TB) harness.NewLocker {
		l, _ := locks.Lookup(name)
		return func(testing.TB) harness.NewLocker { return l.New }
	}
	for _, tc := range []struct {
		name     string
		topology cluster.Topology
		new      func(testing.TB) harness.NewLocker
	}{
		{"token-go", cluster.Single, goLock("token")},
		{"redis-py", cluster.Single, func(t testing.TB) harness.NewLocker { needRedisPy(t); return program.New(redisPy) }},
		{"seed004-php", cluster.Single, func(t testing.TB) harness.NewLocker { needPHP(t); return program.New(seed004PHP) }},
		{"etcd-mutex-go", cluster.EtcdTopology, goLock("etcd-mutex")},
		{"etcd-lease-py", cluster.EtcdTopology, func(t testing.TB) harness.NewLocker {
			needPython(t, "etcd3", "python3-etcd3")
			return program.New(etcdPy)
		}},
		{"advisory-pinned-go", cluster.PostgresTopology, goLock("advisory-pinned")},
		{"pg-advisory-py", cluster.PostgresTopology, func(t testing.TB) harness.NewLocker {
			needPython(t, "psycopg2", "python3-psycopg2")
			return program.New(pgAdvisoryPy)
		}},
		{"get-lock-go", cluster.MariaDBTopology, goLock("get-lock")},
		{"mariadb-get-lock-php", cluster.MariaDBTopology, func(t testing.TB) harness.NewLocker {
			needPDOMySQL(t)
			return program.New(getLockPHP)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			newLocker := tc.new(b)
			ctx := context.Background()
			cl, err := cluster.Start(ctx, cluster.Config{Topology: tc.topology, Backend: local.Local{}, Service: service.LockService(tc.topology)})
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			cycle := func(l harness.Locker) {
				lease, err := l.Acquire(ctx, "bench")
				if err != nil {
					b.Fatal(err)
				}
				if err := lease.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
			var warm time.Duration
			b.ResetTimer()
			for range b.N {
				c, err := harness.Connect(ctx, cl, harness.ClientOptions{TTL: time.Second, Direct: true, Service: service.For(tc.topology)})
				if err != nil {
					b.Fatal(err)
				}
				l := newLocker(c)
				cycle(l)
				start := time.Now()
				cycle(l)
				warm += time.Since(start)
				c.Close()
			}
			b.ReportMetric(float64(warm.Microseconds())/float64(b.N), "µs/warm-cycle")
		})
	}
}

// BenchmarkExploreProgram is the pace of exploration with each service's
// example program, beside the Go lock of its design (token for redis-py's
// bare Lock): runs per minute, runs made as many at once as check explore
// makes by default, on warm deployments. Give it a dozen runs or more
// (-benchtime 12x) for the runs at once to fill.
func BenchmarkExploreProgram(b *testing.B) {
	goLock := func(name string) func(testing.TB) harness.NewLocker {
		l, _ := locks.Lookup(name)
		return func(testing.TB) harness.NewLocker { return l.New }
	}
	python := func(module, pkg, command string) func(testing.TB) harness.NewLocker {
		return func(t testing.TB) harness.NewLocker { needPython(t, module, pkg); return program.New(command) }
	}
	for _, tc := range []struct {
		topology cluster.Topology
		name     string
		new      func(testing.TB) harness.NewLocker
	}{
		{cluster.Single, "token", goLock("token")},
		{cluster.Single, "redis-py", func(t testing.TB) harness.NewLocker { needRedisPy(t); return program.New(redisPy) }},
		{cluster.MariaDBTopology, "get-lock", goLock("get-lock")},
		{cluster.MariaDBTopology, "mariadb-get-lock.php", func(t testing.TB) harness.NewLocker {
			needPHP(t)
			needPDOMySQL(t)
			return program.New(getLockPHP)
		}},
		{cluster.PostgresTopology, "advisory-pinned", goLock("advisory-pinned")},
		{cluster.PostgresTopology, "pg-advisory.py", python("psycopg2", "python3-psycopg2", pgAdvisoryPy)},
		{cluster.EtcdTopology, "etcd-mutex", goLock("etcd-mutex")},
		{cluster.EtcdTopology, "etcd-lease.py", python("etcd3", "python3-etcd3", etcdPy)},
		{cluster.ZooKeeperTopology, "zk-lock", goLock("zk-lock")},
		{cluster.ZooKeeperTopology, "zk-lock.py", python("kazoo", "python3-kazoo", zkPy)},
		{cluster.MemcachedTopology, "memcached", goLock("memcached")},
		{cluster.MemcachedTopology, "memcached-add.py", python("pymemcache", "python3-pymemcache", memcachedPy)},
	} {
		b.Run(string(tc.topology)+"/"+tc.name, func(b *testing.B) {
			newLocker := tc.new(b)
			rep, err := explore.Run(context.Background(), explore.Config{Lock: tc.name, New: newLocker,
				Reference: locks.Reference(tc.topology, false).New, ReferenceOf: locks.ReferenceOfKind(tc.topology, false),
				Topology: tc.topology, Runs: b.N, Seed: 1, Dir: b.TempDir(),
				Parallel: service.Parallel(tc.topology, runtime.NumCPU())})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(rep.RunsPerMin, "runs/min")
			b.ReportMetric(float64(rep.Own), "own")
			b.ReportMetric(float64(rep.Inherent), "inherent")
			b.ReportMetric(float64(rep.Missed), "missed")
			b.ReportMetric(float64(rep.Unknown), "unknown")
		})
	}
}
