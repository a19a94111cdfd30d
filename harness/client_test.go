package harness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// newTestClient starts one node and a client dialing it directly.
func newTestClient(t *testing.T, points []failpoint.Point) (*Client, cluster.Node) {
	t.Helper()
	n, err := local.StartProcess(context.Background(), cluster.NodeConfig{Name: "n1", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop() })
	h, err := history.New("")
	if err != nil {
		t.Fatal(err)
	}
	c := newRedisClient(0, []string{n.Addr()}, h, points)
	t.Cleanup(c.Close)
	return c, n
}

func TestClientCrash(t *testing.T) {
	ctx := context.Background()
	c, n := newTestClient(t, nil)
	if err := c.Redis().Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	bg := make(chan struct{})
	c.Go(func(ctx context.Context) { <-ctx.Done(); close(bg) })
	c.Crash("test")
	<-bg // background work is cancelled by the crash
	if err := c.Redis().Get(ctx, "k").Err(); !errors.Is(err, ErrCrashed) {
		t.Errorf("command after crash: %v, want ErrCrashed", err)
	}
	if err := c.Failpoint(ctx, "anything"); !errors.Is(err, ErrCrashed) {
		t.Errorf("failpoint after crash: %v", err)
	}
	// A crash runs no cleanup: what the client set stays.
	if v, err := n.(sentinel.Node).Admin().Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Errorf("key after crash = %q, %v", v, err)
	}
	ops := c.history.Ops()
	if len(ops) != 1 || ops[0].Kind != history.KindCrash {
		t.Errorf("history = %+v, want one crash", ops)
	}
}

func TestClientPauseBlocksEveryCommand(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestClient(t, []failpoint.Point{{Name: "p", Client: 0, Action: failpoint.Pause(300 * time.Millisecond)}})
	paused := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		close(paused)
		done <- c.Failpoint(ctx, "p")
	}()
	<-paused
	// Wait until the pause is in force, then time a command from a
	// background goroutine, as a watchdog's would be.
	for c.notPausedYet() {
		time.Sleep(time.Millisecond)
	}
	bg := make(chan time.Duration, 1)
	start := time.Now()
	c.Go(func(ctx context.Context) {
		c.Redis().Ping(ctx)
		bg <- time.Since(start)
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d := <-bg; d < 200*time.Millisecond {
		t.Errorf("a command during the pause took %s; it should wait for the pause to end", d)
	}
	ops := c.history.Ops()
	if len(ops) != 1 || ops[0].Kind != history.KindFault || ops[0].Return-ops[0].Call < 300*time.Millisecond {
		t.Errorf("history = %+v, want one pause of 300ms", ops)
	}
}

// notPausedYet reports whether no pause is in force.
func (c *Client) notPausedYet() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resume == nil
}

func TestClientSleepFailpointOnlyDelaysCaller(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestClient(t, []failpoint.Point{{Name: "s", Client: 0, Action: failpoint.Sleep(200 * time.Millisecond)}})
	go c.Failpoint(ctx, "s")
	start := time.Now()
	if err := c.Redis().Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("a sleep at a failpoint held up another goroutine's command for %s", d)
	}
}

func TestClientSkew(t *testing.T) {
	c, _ := newTestClient(t, nil)
	c.SetSkew(time.Hour)
	if d := time.Until(c.Now()); d < 59*time.Minute {
		t.Errorf("skewed clock is %s ahead, want an hour", d)
	}
}

// TestClientHonoursDeadlines: a command ends at its context's deadline, not
// at the client's 1 s read timeout, so a lock's per-node timeout works.
func TestClientHonoursDeadlines(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Redis().BLPop(ctx, 0, "nothing-ever-comes").Err()
	if d := time.Since(start); err == nil || d > 300*time.Millisecond {
		t.Errorf("BLPOP under a 5 ms deadline returned %v after %s", err, d)
	}
}
