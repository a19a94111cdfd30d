package sqldb_test

import (
	"context"
	"errors"
	redisservice "github.com/locklab/locklab/service/redis"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/service/sqldb"
)

// TestSQLService: on the SQL topologies (MariaDB and PostgreSQL) a client
// reaches the lock table's server through its own link, the lock's state
// reads as a cluster.State, the client's SQL stops while the client is
// paused, and a black-holed link fails a query after the client's
// timeout rather than hanging.
func TestSQLService(t *testing.T) {
	for _, tc := range []struct {
		topology cluster.Topology
		dialect  sqldb.Dialect
	}{{cluster.MariaDBTopology, sqldb.MySQL}, {cluster.PostgresTopology, sqldb.Pgx}} {
		t.Run(string(tc.topology), func(t *testing.T) {
			testSQLService(t, tc.topology, tc.dialect)
		})
	}
}

func testSQLService(t *testing.T, topology cluster.Topology, dialect sqldb.Dialect) {
	ctx := context.Background()
	if err := (local.Local{}).Ready(ctx, true); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: topology, Backend: local.Local{}, Service: service.For(topology)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const timeout = 300 * time.Millisecond
	h, _ := history.New("")
	c, links, err := harness.Join(ctx, cl, harness.ClientOptions{ID: 0, TTL: time.Second, Timeout: timeout, Service: service.For(topology)}, h, failpoint.NewSet(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if redisservice.Of(c) != nil || sqldb.Of(c).DB() == nil || len(links) != 1 {
		t.Fatalf("Redis %v, SQL %v, %d links: want only SQL, through one link", redisservice.Of(c), sqldb.Of(c).DB(), len(links))
	}
	// A lock program gets the server's URL through the client's link.
	if e := c.Endpoints(); !strings.Contains(e.MySQL+e.Postgres, "@"+links[0].Addr()) || (e.Postgres != "") != (dialect == sqldb.Pgx) {
		t.Errorf("endpoints %+v, want the %s server's URL through link %s", e, dialect, links[0].Addr())
	}
	if got := sqldb.Of(c).Dialect(); got != dialect || sqldb.DialectOf(cl) != dialect {
		t.Fatalf("dialect: client %q, cluster %q; want %q", got, sqldb.DialectOf(cl), dialect)
	}
	d := sqldb.Of(c).Dialect()
	for _, tc := range []struct {
		stmt      string
		args      []any
		want      cluster.State // Left: the most it may be
		duplicate bool
	}{
		{"DELETE FROM " + sqldb.LockTable, nil, cluster.Free, false},
		{"INSERT INTO " + sqldb.LockTable + " (name, owner) VALUES (?, ?)", []any{"k", "me"}, cluster.Unexpiring(), false},
		{"UPDATE " + sqldb.LockTable + " SET expires_at = " + d.NowPlus(), []any{time.Second.Microseconds()}, cluster.Until(time.Second), false},
		{"INSERT INTO " + sqldb.LockTable + " (name, owner) VALUES (?, ?)", []any{"k", "you"}, cluster.Until(time.Second), true},
	} {
		_, err := sqldb.Of(c).DB().ExecContext(ctx, d.Query(tc.stmt), tc.args...)
		if tc.duplicate {
			// The name is taken: the dialect tells the refusal.
			if !d.Duplicate(err) {
				t.Fatalf("%s: %v; want a duplicate name", tc.stmt, err)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", tc.stmt, err)
		}
		if got, err := cl.LockState(ctx, "k"); err != nil || got.Held != tc.want.Held || got.Expires != tc.want.Expires || got.Left > tc.want.Left {
			t.Errorf("after %s: lock state %v, %v; want %v or less", tc.stmt, got, err, tc.want)
		}
	}

	if dialect == sqldb.Pgx {
		// An advisory lock has no row and no expiry: held while a session
		// holds it, free once it is unlocked. Keys whose hash is negative
		// and positive both: pg_locks shows the key in two halves.
		conn, err := sqldb.Of(c).DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		signs := map[bool]bool{}
		for _, key := range []string{"lock", "adv", "a", "b", "c", "d"} {
			var negative bool
			if err := conn.QueryRowContext(ctx, "SELECT hashtext($1) < 0", key).Scan(&negative); err != nil {
				t.Fatal(err)
			}
			signs[negative] = true
			for _, step := range []struct {
				fn   string
				want cluster.State
			}{{"pg_advisory_lock", cluster.Unexpiring()}, {"pg_advisory_unlock", cluster.Free}} {
				if _, err := conn.ExecContext(ctx, "SELECT "+step.fn+"(hashtext($1))", key); err != nil {
					t.Fatal(err)
				}
				if got, err := cl.LockState(ctx, key); err != nil || got != step.want {
					t.Errorf("after %s(hashtext(%q)): lock state %v, %v; want %v", step.fn, key, got, err, step.want)
				}
			}
		}
		conn.Close()
		if len(signs) != 2 {
			t.Errorf("the keys' hashes all have one sign (negative: %v): both halves of the key are not tested", signs)
		}
	}

	// Paused for 200 ms, the client's ping waits until the pause ends; a
	// ping that went through would take a millisecond.
	go c.Pause(ctx, 200*time.Millisecond, "test")
	waitPaused(t, c)
	start := time.Now()
	if err := sqldb.Of(c).DB().PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("the client's ping took %s while it was paused for 200 ms", took)
	}

	// Replies black-holed: the query gives up after the client's timeout,
	// with no deadline of the caller's.
	heal, err := cl.Network().BlackHole(ctx, network.Downstream, links...)
	if err != nil {
		t.Fatal(err)
	}
	defer heal()
	start = time.Now()
	_, err = sqldb.Of(c).DB().ExecContext(ctx, "SELECT 1")
	took := time.Since(start)
	if err == nil || took < timeout || took > timeout+2*time.Second {
		t.Errorf("a query on a black-holed link: %v after %s; want an error after about %s", err, took, timeout)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	if err := sqldb.Of(c).DB().PingContext(ctx); err != nil {
		t.Errorf("after the heal: %v", err)
	}
}

// TestSQLConnections: a client knows the server-side id of each connection
// of its SQL pool, and its crash closes them all, a pinned one included,
// as a dead process's sockets close.
func TestSQLConnections(t *testing.T) {
	ctx := context.Background()
	if err := (local.Local{}).Ready(ctx, true); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.MariaDBTopology, Backend: local.Local{}, Service: sqldb.MariaDB{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := harness.Connect(ctx, cl, harness.ClientOptions{Service: sqldb.MariaDB{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn, err := sqldb.Of(c).DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if got := c.SQLConnections(); !slices.Contains(got, id) {
		t.Fatalf("SQLConnections %v, want it to hold %d", got, id)
	}
	c.Crash("test")
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := sqldb.Server(cl).Admin().QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection %d still open on the server 5 s after its client crashed", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSQLStatementsStrike: the lock's SQL statements pass the failpoints
// as its Redis commands do: a lost reply after the statement ran on the
// server, a crash before one that is then never sent; the client's own
// statements, outside any phase, count in none.
func TestSQLStatementsStrike(t *testing.T) {
	ctx := context.Background()
	if err := (local.Local{}).Ready(ctx, true); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.MariaDBTopology, Backend: local.Local{}, Service: sqldb.MariaDB{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	h, _ := history.New("")
	points := failpoint.NewSet([]failpoint.Point{
		{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 0, Action: failpoint.DropReply()},
		{Name: failpoint.BeforeCommand(failpoint.PhaseRelease, 1), Client: 0, Action: failpoint.Crash()},
	})
	c, _, err := harness.Join(ctx, cl, harness.ClientOptions{Timeout: 100 * time.Millisecond, Service: sqldb.MariaDB{}}, h, points)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := sqldb.Of(c).DB().ExecContext(ctx, "DELETE FROM "+sqldb.LockTable); err != nil {
		t.Fatal(err)
	}

	actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
	_, err = sqldb.Of(c).DB().ExecContext(actx, "INSERT INTO "+sqldb.LockTable+" (name, owner) VALUES (?, ?)", "k", "me")
	leave()
	if !dropped(err) {
		t.Errorf("the acquire's INSERT: %v, want its reply dropped", err)
	}
	if got, _ := cl.LockState(ctx, "k"); got != cluster.Unexpiring() {
		t.Errorf("after the dropped INSERT the row's state is %v, want held with no expiry: it ran on the server", got)
	}

	rctx, leave := c.Enter(ctx, failpoint.PhaseRelease)
	_, err = sqldb.Of(c).DB().ExecContext(rctx, "DELETE FROM "+sqldb.LockTable+" WHERE name = ?", "k")
	leave()
	if !errors.Is(err, harness.ErrNotSent) {
		t.Errorf("the release's DELETE: %v, want not sent (the client crashed before it)", err)
	}
	if got, _ := cl.LockState(ctx, "k"); got != cluster.Unexpiring() {
		t.Errorf("after the crash before the DELETE the row's state is %v, want held with no expiry", got)
	}
	if lines := points.Unfired(); len(lines) > 0 {
		t.Errorf("failpoints did not fire: %v", lines)
	}
	if got := points.Reached(failpoint.BeforeCommand(failpoint.PhaseAcquire, 2), 0); got != 0 {
		t.Errorf("acquire command 2 reached %d times: the client's own DELETE counted", got)
	}
}

// TestSQLCommitCountsInItsPhase: a transaction begun in an acquire and
// committed in the release is a command of the release when it commits,
// as a FOR UPDATE lock's is.
func TestSQLCommitCountsInItsPhase(t *testing.T) {
	ctx := context.Background()
	if err := (local.Local{}).Ready(ctx, true); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.MariaDBTopology, Backend: local.Local{}, Service: sqldb.MariaDB{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	h, _ := history.New("")
	points := failpoint.NewSet([]failpoint.Point{{Name: failpoint.BeforeCommand(failpoint.PhaseRelease, 1), Client: 0, Action: failpoint.Sleep(time.Millisecond)}})
	c, _, err := harness.Join(ctx, cl, harness.ClientOptions{Service: sqldb.MariaDB{}}, h, points)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
	tx, err := sqldb.Of(c).DB().BeginTx(actx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(actx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	leave()
	_, leave = c.Enter(ctx, failpoint.PhaseRelease)
	err = tx.Commit()
	leave()
	if err != nil {
		t.Fatal(err)
	}
	if got := points.Reached(failpoint.BeforeCommand(failpoint.PhaseRelease, 1), 0); got != 1 {
		t.Errorf("the COMMIT reached release command 1 %d times, want 1", got)
	}
	if got := points.Reached(failpoint.BeforeCommand(failpoint.PhaseAcquire, 2), 0); got != 0 {
		t.Errorf("the COMMIT counted as the acquire's second command")
	}
}

// waitPaused returns once c is paused: its gate no longer lets it on.
func waitPaused(t *testing.T, c *harness.Client) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		err := c.Gate().WaitResumed(ctx)
		cancel()
		if err != nil {
			return
		}
	}
	t.Fatal("the client did not pause within 5 s")
}

// dropped reports whether err is the timeout of a reply the harness
// dropped (failpoint.DropReply).
func dropped(err error) bool {
	var timeout interface{ Timeout() bool }
	return errors.As(err, &timeout) && timeout.Timeout() && strings.Contains(err.Error(), "dropped by locklab")
}
