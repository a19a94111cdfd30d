package memcached_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local/proc"
	"github.com/locklab/locklab/service/memcached"
)

// TestClockJump: a local memcached runs under libfaketime with its
// monotonic clock faked, so a forward jump of its clocks moves the tick
// it counts expiry by (memcached.c, clock_handler, CLOCK_MONOTONIC): an
// item added for a minute is gone at the next tick after a jump of two,
// and one added for ten minutes is not.
func TestClockJump(t *testing.T) {
	if proc.Libfaketime() == "" {
		t.Skip("libfaketime is not installed (make deps installs faketime)")
	}
	ctx := context.Background()
	cl := start(t)
	node := cl.LockNodes()[0]
	j, ok := node.(cluster.ClockJumper)
	if !ok {
		t.Fatalf("memcached's node %T cannot jump its clock", node)
	}
	for _, item := range []string{"ms minute 1 T60", "ms tenminutes 1 T600"} {
		if reply, err := memcached.Ask(ctx, node.Addr(), item+"\r\nx"); err != nil || reply != "HD" {
			t.Fatalf("%s: %q, %v", item, reply, err)
		}
	}
	if err := j.JumpClock(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	// The server's tick comes once a second: three give it room.
	deadline := time.Now().Add(3 * time.Second)
	for {
		reply, err := memcached.Ask(ctx, node.Addr(), "mg minute t")
		if err != nil {
			t.Fatal(err)
		}
		if reply == "EN" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("3 s after a jump of 2 min, an item added for 1 min is still there: %q", reply)
		}
		time.Sleep(50 * time.Millisecond) // the server's tick, not awaitable from outside
	}
	reply, err := memcached.Ask(ctx, node.Addr(), "mg tenminutes t")
	if err != nil {
		t.Fatal(err)
	}
	var secs int
	if _, err := fmt.Sscanf(reply, "HD t%d", &secs); err != nil || secs < 7*60 || secs > 8*60+1 {
		t.Errorf("an item added for 10 min has %q after a jump of 2 min, want about 8 min left", reply)
	}
}
