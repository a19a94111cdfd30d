package sqldb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/service/sqldb"
)

// TestSharedPool: clients joined with one shared pool (OpenSharedPool) share its
// connections, the MariaDB inventory's included: while one holds the only
// connection another cannot get one; and a client's Close leaves the pool
// open to the others.
func TestSharedPool(t *testing.T) {
	ctx := context.Background()
	if err := (local.Local{}).Ready(ctx, true); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.MariaDBTopology, Resource: sqldb.MariaDBInventory{}, Backend: local.Local{}, Service: sqldb.MariaDB{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pool, err := sqldb.OpenSharedPool(ctx, cl, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	h, _ := history.New("")
	points := failpoint.NewSet(nil)
	var clients []*harness.Client
	for id := range 2 {
		c, _, err := harness.Join(ctx, cl, harness.ClientOptions{ID: id, TTL: time.Second, Timeout: time.Second, Pool: pool, Service: sqldb.MariaDB{}}, h, points)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	if sqldb.Of(clients[0]).DB() != sqldb.Of(clients[1]).DB() || clients[1].DB() != sqldb.Of(clients[1]).DB() {
		t.Fatal("the clients' SQL and inventory pools are not the one shared pool")
	}
	conn, err := sqldb.Of(clients[0]).DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := clients[1].DB().Conn(wait); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second connection of a pool of one: %v, want it to wait until its deadline", err)
	}
	conn.Close()
	clients[0].Close()
	var one int
	if err := clients[1].DB().QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatalf("the pool after another client closed: %v", err)
	}
}
