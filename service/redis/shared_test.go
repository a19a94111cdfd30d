package redis_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/service/redis"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// TestSharedPool: clients joined with one shared go-redis pool
// (Service.OpenSharedPool) each get a handle of their own on its
// connections: while one blocks on the server holding the only
// connection, the other's command waits for it and gives up at its
// deadline, and runs once the first is done.
func TestSharedPool(t *testing.T) {
	ctx := context.Background()
	if err := (local.Local{}).Ready(ctx, true); err != nil {
		t.Skip(err)
	}
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.Single, Backend: local.Local{}, Service: redis.Service{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pool, err := redis.Service{}.OpenSharedPool(ctx, cl, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	h, _ := history.New("")
	points := failpoint.NewSet(nil)
	var clients []*harness.Client
	for id := range 2 {
		c, _, err := harness.Join(ctx, cl, harness.ClientOptions{ID: id, TTL: time.Second, Timeout: time.Second, Pool: pool, Service: redis.Service{}}, h, points)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	a, b := redis.Of(clients[0]), redis.Of(clients[1])
	if a == nil || a == b {
		t.Fatal("the clients have no handles of their own on the shared pool")
	}
	blocked := make(chan error, 1)
	go func() { blocked <- a.BLPop(ctx, 5*time.Second, "pool-test").Err() }()
	admin := cl.LockNodes()[0].(sentinel.Node).Admin()
	awaitBlocked(ctx, t, admin)
	wait, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := b.Ping(wait).Err(); !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, goredis.ErrPoolTimeout) {
		t.Fatalf("a second command on a pool of one whose connection is blocked: %v, want it to wait until its deadline", err)
	}
	if err := admin.RPush(ctx, "pool-test", "x").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-blocked; err != nil {
		t.Fatalf("the blocked command: %v", err)
	}
	if err := b.Ping(ctx).Err(); err != nil {
		t.Fatalf("the second client once the connection is free: %v", err)
	}
}

// awaitBlocked waits until the server has one client blocked, for at most
// 5 s.
func awaitBlocked(ctx context.Context, t *testing.T, admin *goredis.Client) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := admin.Info(ctx, "clients").Result()
		if err == nil && strings.Contains(info, "blocked_clients:1\r") {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no client blocked on the server: %v (%v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}
