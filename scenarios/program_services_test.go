package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/program"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/service/etcd"
)

// The shipped lock programs of the services beyond Redis.
var (
	etcdPy       = "/usr/bin/python3 " + programPath("etcd-lease.py")
	etcdPyHerd   = etcdPy + " --herd"
	pgAdvisoryPy = "/usr/bin/python3 " + programPath("pg-advisory.py")
	zkPy         = "/usr/bin/python3 " + programPath("zk-lock.py")
	getLockPHP   = "php " + programPath("mariadb-get-lock.php")
	memcachedPy  = "/usr/bin/python3 " + programPath("memcached-add.py")
)

// needPDOMySQL skips, in one line, when PHP has no PDO for MariaDB.
func needPDOMySQL(t testing.TB) {
	t.Helper()
	out, err := exec.Command("php", "-m").Output()
	if err != nil || !strings.Contains("\n"+string(out), "\npdo_mysql\n") {
		t.Skip("php-cli with php-mysql (pdo_mysql) is not installed (make deps)")
	}
}

// needPython skips, in one line, when /usr/bin/python3 cannot import module.
func needPython(t testing.TB, module, pkg string) {
	t.Helper()
	if exec.Command("/usr/bin/python3", "-c", "import "+module).Run() != nil {
		t.Skip(pkg + " is not installed for /usr/bin/python3 (make deps)")
	}
}

// TestMemcachedPyIsTheMemcachedLock: programs/memcached-add.py, add with
// an expiry and a cas-guarded release in Python with pymemcache, gets the
// verdicts of the Go lock of that design, memcached, in every scenario of
// the memcached service: an eviction, a pause past the lease and a restart
// lose it (inherent); a whole-second clock and a paused delete do not.
func TestMemcachedPyIsTheMemcachedLock(t *testing.T) {
	t.Parallel()
	needPython(t, "pymemcache", "python3-pymemcache")
	sameVerdicts(t, cluster.Memcached, "memcached", memcachedPy, nil)
}

// TestEtcdPyIsTheEtcdMutex: programs/etcd-lease.py, concurrency.Mutex's
// recipe in Python with python3-etcd3, gets the verdicts of the Go lock of
// that design, etcd-mutex, in every scenario of the etcd service: a leader
// killed keeps its lock, a holder paused (SIGSTOP, its keep-alive thread
// included) past its lease loses it.
func TestEtcdPyIsTheEtcdMutex(t *testing.T) {
	t.Parallel()
	needPython(t, "etcd3", "python3-etcd3")
	needFaketime(t)
	sameVerdicts(t, cluster.Etcd, "etcd-mutex", etcdPy, nil)
}

// TestKazooIsZkLock: programs/zk-lock.py, kazoo's Lock recipe with
// python3-kazoo, gets the verdicts of the Go lock of that design, zk-lock,
// in every scenario of the zookeeper service: a leader killed keeps its
// lock, a holder paused (SIGSTOP, kazoo's heartbeat thread included) past
// its session loses it without being told.
func TestKazooIsZkLock(t *testing.T) {
	t.Parallel()
	needPython(t, "kazoo", "python3-kazoo")
	sameVerdicts(t, cluster.ZooKeeper, "zk-lock", zkPy, nil)
}

// TestPgAdvisoryPyIsAdvisoryPinned: programs/pg-advisory.py, an advisory
// lock on the one connection the program keeps, gets the verdicts of the
// Go lock of that design, advisory-pinned, in every scenario of the
// postgres service: its session killed by the server (found by the port
// its link dials from) frees the lock while it works on. busy-pool's
// fault is another user of the harness's pool, which a program does not
// use: that run is spoiled, and says so.
func TestPgAdvisoryPyIsAdvisoryPinned(t *testing.T) {
	t.Parallel()
	needPython(t, "psycopg2", "python3-psycopg2")
	sameVerdicts(t, cluster.PostgreSQL, "advisory-pinned", pgAdvisoryPy,
		map[string]string{"busy-pool-postgres": "a lock program has connections of its own"})
}

// TestGetLockPHPIsGetLock: programs/mariadb-get-lock.php, GET_LOCK on the
// one connection a PHP program keeps with PDO, gets the verdicts of the Go
// lock of that design, get-lock, in every scenario of the mariadb service,
// its statements struck through the relay as get-lock's are: a holder
// whose connection the server kills loses the lock unaware. busy-pool's
// fault is another user of the harness's pool, which a program does not
// use: that run is spoiled, and says so.
func TestGetLockPHPIsGetLock(t *testing.T) {
	t.Parallel()
	needPDOMySQL(t)
	sameVerdicts(t, cluster.MariaDB, "get-lock", getLockPHP,
		map[string]string{"busy-pool-sql": "a lock program has connections of its own"})
}

// sameVerdicts runs the Go lock named golock and the program command in
// every scenario of service, each pair at once, and wants the same
// verdicts of lock, resource and liveness. Handover is logged, not
// compared: a Python program's interpreter and gRPC threads cost it tens
// of milliseconds a handover on a loaded machine, past the bound the Go
// lock keeps. A pair that differs, or that the machine stalled, is made
// again, three tries at most: the last must agree.
//
// unreachable names the scenarios whose fault cannot reach a program, each
// with the reason its run must give for not being exercised.
func sameVerdicts(t *testing.T, service cluster.Service, golock, command string, unreachable map[string]string) {
	l, err := locks.Lookup(golock)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, s := range scenarios.All() {
		if s.Topology.Service() != service {
			continue
		}
		ran++
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			why, ok := unreachable[s.Name]
			if s.Workload.Pool > 0 {
				// Clients sharing one service's pool are threads of one
				// process, which a program is not.
				why, ok = "cannot share the service's pool", true
			}
			if ok {
				got := runProgram(t, s.Name, command)
				if len(got.Spoiled) == 0 || !strings.Contains(strings.Join(got.Spoiled, "; "), why) {
					t.Errorf("spoiled: %q, want a line with %q", got.Spoiled, why)
				}
				return
			}
			opts := func() runner.Options { return runner.Options{Seed: 1, Dir: t.TempDir()} }
			var want, got *runner.Result
			for try := 1; ; try++ {
				var err error
				if want, err = runner.Run(context.Background(), s, l.New, opts()); skippable(err) {
					t.Skip(err)
				} else if err != nil {
					t.Fatalf("%s: %v", golock, err)
				}
				if got, err = runner.Run(context.Background(), s, program.New(command), opts()); err != nil {
					t.Fatalf("program: %v", err)
				}
				if try == 3 {
					break
				}
				if got.Late() != nil || want.Late() != nil {
					t.Logf("try %d: the machine stalled a client; running again", try)
					continue
				}
				if diff := differ(got, want); diff != "" {
					// A race the machine's load decides (a holder's unlock
					// sent as the leader died, which go-zookeeper's recipe
					// does not retry and kazoo's does; a session the
					// starved servers expired late) can part the two in
					// one run: a difference must show in every try.
					t.Logf("try %d: %s; running again", try, diff)
					continue
				}
				break
			}
			if len(got.Spoiled) > 0 {
				t.Fatalf("program: spoiled: %q", got.Spoiled)
			}
			for _, c := range []string{checker.CheckLock, checker.CheckResource, checker.CheckLiveness} {
				if got.Verdicts[c] == checker.Unknown {
					t.Errorf("program: %s unknown (%s)", c, detail(got, c))
				}
				if got.Verdicts[c] != want.Verdicts[c] {
					t.Errorf("%s: program %s (%s), %s %s (%s)", c, got.Verdicts[c], detail(got, c), golock, want.Verdicts[c], detail(want, c))
				}
			}
			t.Logf("handover: program %s (%s), %s %s (%s)", got.Verdicts[checker.CheckHandover], detail(got, checker.CheckHandover),
				golock, want.Verdicts[checker.CheckHandover], detail(want, checker.CheckHandover))
			t.Logf("program %v, %s %v", got.Verdicts, golock, want.Verdicts)
		})
	}
	if ran == 0 {
		t.Fatalf("no scenario of service %s", service)
	}
}

// differ names the first check of lock, resource and liveness whose
// verdicts got and want do not share, or is "".
func differ(got, want *runner.Result) string {
	for _, c := range []string{checker.CheckLock, checker.CheckResource, checker.CheckLiveness} {
		if got.Verdicts[c] != want.Verdicts[c] {
			return fmt.Sprintf("%s: program %s (%s), Go lock %s (%s)", c, got.Verdicts[c], detail(got, c), want.Verdicts[c], detail(want, c))
		}
	}
	return ""
}

// skippable reports whether err says a server the run needs is missing.
func skippable(err error) bool {
	return errors.Is(err, etcd.ErrNoEtcd) || errors.Is(err, local.ErrNoMariaDB) || errors.Is(err, cluster.ErrNoPostgres)
}

// TestExploreFindsAProgramsBug: explore, told only the program and its
// service, finds the bug of etcd-lease.py --herd, whose waiters all watch
// the holder's key and all take the lock when it goes: two clients then
// hold it at once with no fault near them, the program's own failure.
func TestExploreFindsAProgramsBug(t *testing.T) {
	needPython(t, "etcd3", "python3-etcd3")
	t.Parallel()
	ref, err := locks.Lookup("etcd-mutex")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := explore.Run(context.Background(), explore.Config{Lock: "etcd-lease-herd", New: program.New(etcdPyHerd),
		Topology: cluster.EtcdTopology, Reference: ref.New, Runs: 1, Seed: 1, Parallel: 2, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.FirstOwnS == nil {
		t.Fatalf("no failure of the program's own in %d runs (inherent %d, untold %d, unknown %d, missed %d)", rep.Runs, rep.Inherent, rep.Untold, rep.Unknown, rep.Missed)
	}
	// A Python program's handover may be slow on a loaded machine, its own
	// too; the herd's bug is the lock's.
	for _, b := range rep.Bugs {
		t.Logf("found after %.1f s: %s (%s)", *rep.FirstOwnS, b.Signature, rep.First.Plan)
		for _, c := range b.Found.Checks {
			if c.Checker == checker.CheckLock && c.Verdict == checker.Illegal && c.Kind == checker.Own {
				return
			}
		}
	}
	t.Errorf("no bug found is an own illegal lock: %+v", rep.Bugs)
}

// TestProgramDrawnFaultOnEtcd: a drawn fault at the lock's own requests
// strikes a program on etcd, whose relay reads its gRPC: a pause at its
// release's first request, the Txn that deletes its key, is met, not
// missed.
func TestProgramDrawnFaultOnEtcd(t *testing.T) {
	needPython(t, "etcd3", "python3-etcd3")
	t.Parallel()
	s, err := scenarios.Lookup("contention-etcd")
	if err != nil {
		t.Fatal(err)
	}
	s.Failpoints = append(s.Failpoints, failpoint.Point{Name: failpoint.BeforeCommand(failpoint.PhaseRelease, 1),
		Client: failpoint.AnyClient, Action: failpoint.Pause(50 * time.Millisecond), Optional: true})
	res, err := runner.Run(context.Background(), s, program.New(etcdPy), runner.Options{Seed: 1, Dir: t.TempDir()})
	if errors.Is(err, etcd.ErrNoEtcd) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Spoiled) > 0 || len(res.Missed) > 0 {
		t.Fatalf("spoiled %q, missed %q: want the fault met", res.Spoiled, res.Missed)
	}
	if got := struck(t, res.Dir); len(got) != 1 || !strings.HasSuffix(got[0], "at TXN (release command 1)") {
		t.Errorf("struck %q, want one pause at the release's TXN", got)
	}
}

// TestProgramDrawnFaultOnMariaDB: the same drawn fault, on mariadb, where
// the relay reads the program's statements, strikes its release's SELECT
// RELEASE_LOCK and is met: not missed.
func TestProgramDrawnFaultOnMariaDB(t *testing.T) {
	needPDOMySQL(t)
	t.Parallel()
	s, err := scenarios.Lookup("contention-sql")
	if err != nil {
		t.Fatal(err)
	}
	s.Failpoints = append(s.Failpoints, failpoint.Point{Name: failpoint.BeforeCommand(failpoint.PhaseRelease, 1),
		Client: failpoint.AnyClient, Action: failpoint.Pause(50 * time.Millisecond), Optional: true})
	res, err := runner.Run(context.Background(), s, program.New(getLockPHP), runner.Options{Seed: 1, Dir: t.TempDir()})
	if skippable(err) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Spoiled) > 0 || len(res.Missed) > 0 {
		t.Fatalf("spoiled %q, missed %q: want the fault met", res.Spoiled, res.Missed)
	}
	if got := struck(t, res.Dir); len(got) != 1 || !strings.HasSuffix(got[0], "at SELECT (release command 1)") {
		t.Errorf("struck %q, want the pause at the release's SELECT", got)
	}
}

// TestPgProgramStatementFaults: on postgres a program's simple queries pass
// its relay, which strikes them as a Go lock's statements are struck: a
// crash right after the statement that took the lock, a lost reply of the
// release's, strike pg-advisory.py's SELECT where they strike
// advisory-pinned's, with the same verdicts.
func TestPgProgramStatementFaults(t *testing.T) {
	t.Parallel()
	needPython(t, "psycopg2", "python3-psycopg2")
	statementFaults(t, "contention-postgres", "advisory-pinned", pgAdvisoryPy)
}

// TestMariaDBProgramStatementFaults: on mariadb a program's statements
// pass its relay, which strikes them as a Go lock's: a crash right after
// the statement that took the lock, a lost reply of the release's, strike
// mariadb-get-lock.php's SELECT GET_LOCK and SELECT RELEASE_LOCK where
// they strike get-lock's, with the same verdicts, whether PDO sends them
// as COM_QUERY or prepares them on the server (COM_STMT_EXECUTE).
func TestMariaDBProgramStatementFaults(t *testing.T) {
	t.Parallel()
	needPDOMySQL(t)
	for _, tc := range []struct{ name, command string }{
		{"emulated", getLockPHP},
		{"server-prepares", getLockPHP + " --server-prepares"},
	} {
		t.Run(tc.name, func(t *testing.T) { statementFaults(t, "contention-sql", "get-lock", tc.command) })
	}
}

// statementFaults runs scenario with a crash after the acquire's first
// statement, then with the release's first reply lost, for the Go lock
// golock and for the program command, and wants the same statements
// struck and the same verdicts.
func statementFaults(t *testing.T, scenario, golock, command string) {
	l, err := locks.Lookup(golock)
	if err != nil {
		t.Fatal(err)
	}
	base, err := scenarios.Lookup(scenario)
	if err != nil {
		t.Fatal(err)
	}
	for _, fp := range []failpoint.Point{
		{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 0, Skip: 2, Action: failpoint.Crash()},
		{Name: failpoint.AfterCommand(failpoint.PhaseRelease, 1), Client: 0, Skip: 1, Action: failpoint.DropReply()},
	} {
		t.Run(fp.Name, func(t *testing.T) {
			t.Parallel()
			s := base
			s.Failpoints = []failpoint.Point{fp}
			want, err := runner.Run(context.Background(), s, l.New, runner.Options{Seed: 1, Dir: t.TempDir()})
			if skippable(err) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := runner.Run(context.Background(), s, program.New(command), runner.Options{Seed: 1, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Spoiled) > 0 || len(want.Spoiled) > 0 {
				t.Fatalf("spoiled: program %q, %s %q", got.Spoiled, golock, want.Spoiled)
			}
			for _, c := range []string{checker.CheckLock, checker.CheckResource, checker.CheckLiveness} {
				if got.Verdicts[c] != want.Verdicts[c] {
					t.Errorf("%s: program %s (%s), %s %s (%s)", c, got.Verdicts[c], detail(got, c), golock, want.Verdicts[c], detail(want, c))
				}
			}
			g, w := struck(t, got.Dir), struck(t, want.Dir)
			if !slices.Equal(g, w) || len(g) == 0 {
				t.Errorf("struck: program %q, %s %q", g, golock, w)
			}
			t.Logf("struck: %q", g)
			t.Logf("program %v, %s %v", got.Verdicts, golock, want.Verdicts)
		})
	}
}
