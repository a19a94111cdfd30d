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
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/service/sqldb"
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
	cl, err := cluster.Start(ctx, cluster.Config{Topology: topology, Backend: local.Local{}, Service: service.For(topology)})
	if errors.Is(err, cluster.ErrNoPostgres) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := harness.Connect(ctx, cl, harness.ClientOptions{Service: service.For(topology)})
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

	if _, err := sqldb.Server(cl).Admin().ExecContext(ctx, "INSERT INTO "+sqldb.LockTable+" (name, owner) VALUES ('k', 'nobody')"); err != nil {
		t.Fatal(err)
	}
	tx, err := sqldb.Of(c).DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := tx.QueryRowContext(ctx, "SELECT id FROM "+sqldb.LockTable+" WHERE name = 'k' FOR UPDATE").Scan(&id); err != nil {
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
	other, err := sqldb.Server(cl).Admin().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	wait := "SELECT id FROM " + sqldb.LockTable + " WHERE name = 'k' FOR UPDATE WAIT 2"
	if sqldb.DialectOf(cl) == sqldb.Pgx {
		// The backend ends a moment after pg_terminate_backend returns.
		if _, err := other.ExecContext(ctx, "SET LOCAL lock_timeout = '2s'"); err != nil {
			t.Fatal(err)
		}
		wait = "SELECT id FROM " + sqldb.LockTable + " WHERE name = 'k' FOR UPDATE"
	}
	if _, err := other.ExecContext(ctx, wait); err != nil {
		t.Errorf("the row lock of a killed connection is still held: %v", err)
	}
	if _, err := tx.ExecContext(ctx, sqldb.Of(c).Dialect().Query("UPDATE "+sqldb.LockTable+" SET owner = 'me' WHERE id = ?"), id); err == nil {
		t.Error("the killed connection's transaction still writes")
	}
	tx.Rollback()
	if err := sqldb.Of(c).DB().PingContext(ctx); err != nil {
		t.Errorf("a new connection after the kill: %v", err)
	}
}
