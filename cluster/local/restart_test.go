package local

import (
	"context"
	"database/sql"
	"testing"

	"github.com/locklab/locklab/cluster"
)

// TestSQLServerKillRestart: a run's MariaDB and PostgreSQL crash and
// restart on the same address with what they committed, and the session
// lock held before the crash (GET_LOCK, an advisory lock) is gone after it,
// which is what restart-sql and restart-postgres strike a lock with.
func TestSQLServerKillRestart(t *testing.T) {
	for _, tc := range []struct {
		name          string
		start         func(testing.TB) cluster.Database
		lock, isFree  string
		wantFreeAfter bool
	}{
		{"mariadb", func(tb testing.TB) cluster.Database { return startTestMariaDB(tb) },
			"SELECT GET_LOCK('k', 0)", "SELECT IS_FREE_LOCK('k')", true},
		{"postgres", func(tb testing.TB) cluster.Database { return startTestPostgres(tb) },
			"SELECT pg_try_advisory_lock(7)", "SELECT count(*) = 0 FROM pg_locks WHERE locktype = 'advisory'", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			db := tc.start(t)
			addr := db.(interface{ Addr() string }).Addr()
			if err := db.SetupInventory(ctx, 42); err != nil {
				t.Fatal(err)
			}
			held, err := db.Admin().Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			var took bool
			if err := held.QueryRowContext(ctx, tc.lock).Scan(&took); err != nil || !took {
				t.Fatalf("%s: %v, %v", tc.lock, took, err)
			}
			r, ok := db.(cluster.ServerRestarter)
			if !ok {
				t.Fatalf("%T is no cluster.ServerRestarter", db)
			}
			if err := r.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := r.Restart(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := db.(interface{ Addr() string }).Addr(); got != addr {
				t.Errorf("restarted on %s, want %s", got, addr)
			}
			if stock, err := db.Stock(ctx); err != nil || stock != 42 {
				t.Errorf("stock after the restart: %d, %v; want 42", stock, err)
			}
			var free bool
			if err := queryFresh(ctx, db.Admin(), tc.isFree, &free); err != nil || free != tc.wantFreeAfter {
				t.Errorf("%s after the restart: %v, %v; want %v (the session that held it died)", tc.isFree, free, err, tc.wantFreeAfter)
			}
		})
	}
}

// queryFresh scans one value of query on db, retrying once: the pool's
// first connection after a restart may be one the crash closed.
func queryFresh(ctx context.Context, db *sql.DB, query string, v any) error {
	err := db.QueryRowContext(ctx, query).Scan(v)
	if err != nil {
		err = db.QueryRowContext(ctx, query).Scan(v)
	}
	return err
}
