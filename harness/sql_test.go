package harness

import (
	"context"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
)

// TestSQLService: on the SQL topologies (MariaDB and PostgreSQL) a client
// reaches the lock table's server through its own link, the lock's state
// reads as a Redis PTTL does, the client's SQL stops while the client is
// paused, and a black-holed link fails a query after the client's
// timeout rather than hanging.
func TestSQLService(t *testing.T) {
	for _, tc := range []struct {
		topology cluster.Topology
		dialect  cluster.Dialect
	}{{cluster.SQL, cluster.MySQL}, {cluster.Postgres, cluster.Pgx}} {
		t.Run(string(tc.topology), func(t *testing.T) {
			testSQLService(t, tc.topology, tc.dialect)
		})
	}
}

func testSQLService(t *testing.T, topology cluster.Topology, dialect cluster.Dialect) {
	ctx := context.Background()
	if err := (local.Local{}).Ready(ctx, true); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: topology, Backend: local.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const timeout = 300 * time.Millisecond
	h, _ := history.New("")
	c, links, err := Join(ctx, cl, ClientOptions{ID: 0, TTL: time.Second, Timeout: timeout}, h, NewFailpoints(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Redis() != nil || c.SQL() == nil || len(links) != 1 {
		t.Fatalf("Redis %v, SQL %v, %d links: want only SQL, through one link", c.Redis(), c.SQL(), len(links))
	}
	if got := c.SQLDialect(); got != dialect || cl.SQLDialect() != dialect {
		t.Fatalf("dialect: client %q, cluster %q; want %q", got, cl.SQLDialect(), dialect)
	}
	d := c.SQLDialect()
	for _, tc := range []struct {
		stmt      string
		args      []any
		min, max  time.Duration
		duplicate bool
	}{
		{"DELETE FROM " + cluster.LockTable, nil, -2, -2, false},
		{"INSERT INTO " + cluster.LockTable + " (name, owner) VALUES (?, ?)", []any{"k", "me"}, -1, -1, false},
		{"UPDATE " + cluster.LockTable + " SET expires_at = " + d.NowPlus(), []any{time.Second.Microseconds()}, 1, time.Second, false},
		{"INSERT INTO " + cluster.LockTable + " (name, owner) VALUES (?, ?)", []any{"k", "you"}, 1, time.Second, true},
	} {
		_, err := c.SQL().ExecContext(ctx, d.Query(tc.stmt), tc.args...)
		if tc.duplicate {
			// The name is taken: the dialect tells the refusal.
			if !d.Duplicate(err) {
				t.Fatalf("%s: %v; want a duplicate name", tc.stmt, err)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", tc.stmt, err)
		}
		if got, err := cl.LockState(ctx, "k"); err != nil || got < tc.min || got > tc.max {
			t.Errorf("after %s: lock state %v, %v; want %v to %v", tc.stmt, got, err, tc.min, tc.max)
		}
	}

	if dialect == cluster.Pgx {
		// An advisory lock has no row and no expiry: -1 while a session
		// holds it, -2 once it is unlocked. Keys whose hash is negative
		// and positive both: pg_locks shows the key in two halves.
		conn, err := c.SQL().Conn(ctx)
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
				want time.Duration
			}{{"pg_advisory_lock", -1}, {"pg_advisory_unlock", -2}} {
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
	started := make(chan struct{})
	go c.pause(ctx, 200*time.Millisecond, "test", func(ctx context.Context) {
		close(started)
		<-ctx.Done()
	}, false)
	<-started
	start := time.Now()
	if err := c.SQL().PingContext(ctx); err != nil {
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
	_, err = c.SQL().ExecContext(ctx, "SELECT 1")
	took := time.Since(start)
	if err == nil || took < timeout || took > timeout+2*time.Second {
		t.Errorf("a query on a black-holed link: %v after %s; want an error after about %s", err, took, timeout)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	if err := c.SQL().PingContext(ctx); err != nil {
		t.Errorf("after the heal: %v", err)
	}
}
