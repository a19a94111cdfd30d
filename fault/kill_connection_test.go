package fault_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
)

// TestKillConnection: the server kills the client's connections, so a
// transaction open on one of them is rolled back and its row lock freed;
// the client's next request on it fails, and a new connection works. On
// MariaDB and on PostgreSQL.
func TestKillConnection(t *testing.T) {
	for _, topology := range []cluster.Topology{cluster.MariaDBTopology, cluster.PostgresTopology} {
		t.Run(string(topology), func(t *testing.T) { testKillConnection(t, topology) })
	}
}

func testKillConnection(t *testing.T, topology cluster.Topology) {
	ctx := context.Background()
	if err := (local.Local{}).Ready(ctx, true); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: topology, Backend: local.Local{}})
	if errors.Is(err, cluster.ErrNoPostgres) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := harness.Connect(ctx, cl, harness.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, err := history.New(filepath.Join(t.TempDir(), "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	env := fault.NewEnv(cl, h)
	env.AddClient(c, nil)

	if _, err := cl.LockDatabase().Admin().ExecContext(ctx, "INSERT INTO "+cluster.LockTable+" (name, owner) VALUES ('k', 'nobody')"); err != nil {
		t.Fatal(err)
	}
	tx, err := c.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := tx.QueryRowContext(ctx, "SELECT id FROM "+cluster.LockTable+" WHERE name = 'k' FOR UPDATE").Scan(&id); err != nil {
		t.Fatal(err)
	}
	heal, err := fault.Apply(ctx, env, fault.KillConnection{Client: 0}, history.Op{Detail: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	// The row lock is free: another session takes it without waiting
	// (NOWAIT fails at once while it is held).
	other, err := cl.LockDatabase().Admin().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	wait := "SELECT id FROM " + cluster.LockTable + " WHERE name = 'k' FOR UPDATE WAIT 2"
	if cl.SQLDialect() == cluster.Pgx {
		// The backend ends a moment after pg_terminate_backend returns.
		if _, err := other.ExecContext(ctx, "SET LOCAL lock_timeout = '2s'"); err != nil {
			t.Fatal(err)
		}
		wait = "SELECT id FROM " + cluster.LockTable + " WHERE name = 'k' FOR UPDATE"
	}
	if _, err := other.ExecContext(ctx, wait); err != nil {
		t.Errorf("the row lock of a killed connection is still held: %v", err)
	}
	if _, err := tx.ExecContext(ctx, c.SQLDialect().Query("UPDATE "+cluster.LockTable+" SET owner = 'me' WHERE id = ?"), id); err == nil {
		t.Error("the killed connection's transaction still writes")
	}
	tx.Rollback()
	if err := c.SQL().PingContext(ctx); err != nil {
		t.Errorf("a new connection after the kill: %v", err)
	}
}
