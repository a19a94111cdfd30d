package harness

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/history"
)

// TestSQLService: on the SQL topology a client reaches the lock table's
// server through its own link, the lock's state reads as a Redis PTTL
// does, and the client's SQL stops while the client is paused.
func TestSQLService(t *testing.T) {
	ctx := context.Background()
	if err := (local.Local{}).Ready(ctx, true); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.SQL, Backend: local.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := Connect(ctx, cl, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Redis() != nil || c.SQL() == nil {
		t.Fatalf("Redis %v, SQL %v: want only SQL on the SQL topology", c.Redis(), c.SQL())
	}
	for _, tc := range []struct {
		stmt     string
		min, max time.Duration
	}{
		{"DELETE FROM " + cluster.LockTable, -2, -2},
		{"INSERT INTO " + cluster.LockTable + " (name, owner) VALUES ('k', 'me')", -1, -1},
		{"UPDATE " + cluster.LockTable + " SET expires_at = NOW(3) + INTERVAL 1 SECOND", 1, time.Second},
	} {
		if _, err := c.SQL().ExecContext(ctx, tc.stmt); err != nil {
			t.Fatalf("%s: %v", tc.stmt, err)
		}
		if got, err := cl.LockState(ctx, "k"); err != nil || got < tc.min || got > tc.max {
			t.Errorf("after %s: lock state %v, %v; want %v to %v", tc.stmt, got, err, tc.min, tc.max)
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
}

// TestSQLConnections: a client knows the server-side id of each connection
// of its SQL pool, and its crash closes them all, a pinned one included,
// as a dead process's sockets close.
func TestSQLConnections(t *testing.T) {
	ctx := context.Background()
	if err := (local.Local{}).Ready(ctx, true); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.SQL, Backend: local.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c, err := Connect(ctx, cl, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn, err := c.SQL().Conn(ctx)
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
		if err := cl.LockDatabase().Admin().QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&n); err != nil {
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
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.SQL, Backend: local.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	h, _ := history.New("")
	points := NewFailpoints([]Failpoint{
		{Name: AfterCommand(PhaseAcquire, 1), Client: 0, Action: DropReply()},
		{Name: BeforeCommand(PhaseRelease, 1), Client: 0, Action: Crash()},
	})
	c, _, err := Join(ctx, cl, ClientOptions{Timeout: 100 * time.Millisecond}, h, points)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.SQL().ExecContext(ctx, "DELETE FROM "+cluster.LockTable); err != nil {
		t.Fatal(err)
	}

	actx, leave := c.Enter(ctx, PhaseAcquire)
	_, err = c.SQL().ExecContext(actx, "INSERT INTO "+cluster.LockTable+" (name, owner) VALUES (?, ?)", "k", "me")
	leave()
	var dropped errReplyDropped
	if !errors.As(err, &dropped) {
		t.Errorf("the acquire's INSERT: %v, want its reply dropped", err)
	}
	if got, _ := cl.LockState(ctx, "k"); got != -1 {
		t.Errorf("after the dropped INSERT the row's state is %v, want -1: it ran on the server", got)
	}

	rctx, leave := c.Enter(ctx, PhaseRelease)
	_, err = c.SQL().ExecContext(rctx, "DELETE FROM "+cluster.LockTable+" WHERE name = ?", "k")
	leave()
	if !errors.Is(err, ErrNotSent) {
		t.Errorf("the release's DELETE: %v, want not sent (the client crashed before it)", err)
	}
	if got, _ := cl.LockState(ctx, "k"); got != -1 {
		t.Errorf("after the crash before the DELETE the row's state is %v, want -1", got)
	}
	if lines := points.Unfired(); len(lines) > 0 {
		t.Errorf("failpoints did not fire: %v", lines)
	}
	if got := points.reached[BeforeCommand(PhaseAcquire, 2)][0]; got != 0 {
		t.Errorf("acquire command 2 reached %d times: the client's own DELETE counted", got)
	}
}
