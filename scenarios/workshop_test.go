package scenarios_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	redisservice "github.com/locklab/locklab/service/redis"
)

// MyLock is docs/own-lock.md's example lock: SET NX PX, released with a plain DEL.
type MyLock struct{ c *harness.Client }

type myLease struct {
	c   *harness.Client
	key string
}

func (l MyLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	ok, err := redisservice.Of(l.c).SetNX(ctx, key, l.c.ID(), l.c.TTL()).Result()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, harness.ErrNotAcquired
	}
	return myLease{l.c, key}, nil
}

func (l myLease) Release(ctx context.Context) error {
	return redisservice.Of(l.c).Del(ctx, l.key).Err()
}

func (myLease) Token() uint64 { return 0 }

// TestWorkshopLock runs docs/own-lock.md's example: the plain-DEL release must be
// caught by the lock checker in pause-before-del, which strikes the lock's
// own commands; the lock carries no hook.
func TestWorkshopLock(t *testing.T) {
	t.Parallel()
	expect(t, func() []string {
		res := settled(t, func() (*runner.Result, error) {
			return scenarios.Run(context.Background(), "pause-before-del",
				func(c *harness.Client) harness.Locker { return MyLock{c} },
				runner.Options{Seed: 1, Clients: 4, Dir: t.TempDir()})
		})
		if got := res.Verdicts[checker.CheckLock]; got != checker.Illegal {
			return []string{fmt.Sprintf("lock checker: %s, want illegal for a plain-DEL release", got)}
		}
		return nil
	})
}

// TestExploreFindsTheWorkshopLock: explore, knowing nothing of the lock,
// finds a failure of its own within 30 runs and says how to replay it.
func TestExploreFindsTheWorkshopLock(t *testing.T) {
	if testing.Short() {
		t.Skip("explores for up to 30 runs")
	}
	t.Parallel()
	rep, err := explore.Run(context.Background(), explore.Config{
		Lock:        "my-lock",
		New:         func(c *harness.Client) harness.Locker { return MyLock{c} },
		Reference:   locks.Reference(cluster.Single, false).New,
		Topology:    cluster.Single,
		Runs:        30, // not a time, so that a loaded machine makes as many plans
		Seed:        1,
		StopAtFirst: true,
		Dir:         t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Own == 0 || rep.First == nil {
		t.Fatalf("no failure of the lock's own in %d runs: %+v", rep.Runs, rep)
	}
	t.Logf("found after %.1f s and %d runs: %s; replay %s", *rep.FirstOwnS, rep.Runs, rep.First.Plan, rep.Replay)
	for _, c := range rep.First.Checks {
		t.Logf("%s: %s (%s): %s", c.Checker, c.Verdict, c.Kind, c.Detail)
	}
}
