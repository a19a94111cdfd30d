package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"testing"

	"github.com/locklab/locklab/broken"
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/service/sqldb"
)

// TestSQLLocksOnPostgres: the unique-row locks of MariaDB's pitfalls d1
// and d2 give the same verdicts on PostgreSQL, where the same code runs
// in the other dialect: the lock with a watchdog passes contention and
// slow work, the row without an expiry is stuck once its holder crashes,
// and the cleanup without a watchdog deletes a slow holder's row.
func TestSQLLocksOnPostgres(t *testing.T) {
	t.Parallel()
	ok := map[string]checker.Verdict{checker.CheckLock: checker.OK, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK}
	for _, tc := range []struct {
		lock, scenario string
		new            harness.NewLocker
		want           map[string]checker.Verdict
	}{
		{"unique-row", "contention-postgres", sqldb.NewUniqueRowLock, ok},
		{"unique-row", "slow-work-postgres", sqldb.NewUniqueRowLock, ok},
		{"row-no-expiry", "crash-holder-postgres", broken.NewRowNoExpiry, map[string]checker.Verdict{checker.CheckLiveness: checker.Stuck}},
		{"row-cleanup", "slow-work-postgres", sqldb.NewUniqueRowLockLeased, map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal}},
	} {
		t.Run(tc.lock+"/"+tc.scenario, func(t *testing.T) {
			t.Parallel()
			s, err := scenarios.Lookup(tc.scenario)
			if err != nil {
				t.Fatal(err)
			}
			if s.Topology != cluster.PostgresTopology {
				t.Fatalf("%s runs on %s", s.Name, s.Topology)
			}
			misses := func(res *runner.Result) (missed []string) {
				for checkerName, want := range tc.want {
					if got := verdictOf(res, checkerName); got.Verdict != want {
						missed = append(missed, fmt.Sprintf("%s: %s (%s); want %s", checkerName, got.Verdict, got.Detail, want))
					}
				}
				return missed
			}
			var res *runner.Result
			expect(t, func() []string {
				var err error
				res, err = runner.Run(context.Background(), s, tc.new, runner.Options{Lock: tc.lock, ReferenceRuns: -1})
				if errors.Is(err, cluster.ErrNoPostgres) {
					t.Fatal(err) // CI must not pass by skipping: make deps installs it
				}
				if err != nil {
					t.Fatal(err)
				}
				return misses(res)
			})
			if st := verdictOf(res, checker.CheckLiveness); st.Verdict == checker.Stuck {
				t.Logf("liveness: %s", st.Detail)
			}
		})
	}
}

// TestPgrowProgram: programs/pgrow.sh, the unique-row lock over psql,
// passes contention on postgres through LOCKLAB_POSTGRES, and a crash of
// its process leaves a row that expires.
func TestPgrowProgram(t *testing.T) {
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("no psql here (make deps installs postgresql, which brings it)")
	}
	for _, name := range []string{"contention-postgres", "crash-holder-postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// One psql per request is slow enough that a loaded machine
			// can make a waiter look stuck.
			expect(t, func() []string {
				res := runProgram(t, name, programPath("pgrow.sh"))
				if len(res.Spoiled) > 0 {
					t.Fatalf("spoiled: %v", res.Spoiled)
				}
				var missed []string
				for _, checkerName := range []string{checker.CheckLock, checker.CheckResource, checker.CheckLiveness} {
					if got := verdictOf(res, checkerName); got.Verdict != checker.OK {
						missed = append(missed, fmt.Sprintf("%s: %s (%s); want ok", checkerName, got.Verdict, got.Detail))
					}
				}
				t.Logf("%v", res.Verdicts)
				return missed
			})
		})
	}
}
