package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	redisservice "github.com/locklab/locklab/service/redis"
)

// TestSharedPoolCorrectLocks: the correct locks of Redis (the token lock
// with watchdog) and memcached (add + cas), their clients the request
// threads of one service that share a pool smaller than its waiters
// (pool, pool-memcached), stay ok on every checker: they wait for the
// lock by retrying, so no waiter keeps a connection from the holder.
func TestSharedPoolCorrectLocks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ lock, scenario string }{
		{"token-watchdog", "pool"},
		{"memcached", "pool-memcached"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			l, err := locks.Lookup(tc.lock)
			if err != nil {
				t.Fatal(err)
			}
			var res *runner.Result
			for try := 1; try <= 3; try++ { // a run the machine stalls is unknown: made again
				if res, err = scenarios.Run(context.Background(), tc.scenario, l.New, runner.Options{Lock: tc.lock}); err != nil {
					t.Fatal(err)
				}
				if verdictOf(res, checker.CheckLiveness).Verdict != checker.Unknown && verdictOf(res, checker.CheckLock).Verdict != checker.Unknown {
					break
				}
			}
			for _, name := range []string{checker.CheckLock, checker.CheckResource, checker.CheckLiveness} {
				if c := verdictOf(res, name); c.Verdict != checker.OK {
					t.Errorf("%s in %s: %s %s (%s); want ok", tc.lock, tc.scenario, name, c.Verdict, c.Detail)
				}
			}
			if res.Stats.Acquires < 10 {
				t.Errorf("%s in %s: %d acquires; want the clients to take turns through the shared pool", tc.lock, tc.scenario, res.Stats.Acquires)
			}
		})
	}
}

// blockingWait is a token lock whose refused acquire blocks on the server
// (BLPOP on a wake-up list, for up to a second) before it reports the lock
// held, as a lock that waits for a release notice does: each waiter keeps a
// pooled connection while it waits, which the holder's release needs.
type blockingWait struct {
	c *harness.Client
	n int
}

func (l *blockingWait) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	rc := redisservice.Of(l.c)
	l.n++
	token := fmt.Sprintf("c%d-%d", l.c.ID(), l.n)
	ok, err := rc.SetNX(ctx, key, token, l.c.TTL()).Result()
	switch {
	case err != nil:
		return nil, err
	case ok:
		return &wakeLease{rc: rc, key: key, token: token}, nil
	}
	if err := rc.BLPop(ctx, time.Second, key+":wake").Err(); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	return nil, harness.ErrNotAcquired
}

// wakeLease releases by a compare-and-delete, then wakes one waiter.
type wakeLease struct {
	rc         *redis.Client
	key, token string
}

var releaseAndWake = redis.NewScript(`if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("DEL", KEYS[1]); redis.call("LPUSH", KEYS[2], "x"); redis.call("LTRIM", KEYS[2], 0, 0); return 1`)

func (w *wakeLease) Release(ctx context.Context) error {
	n, err := releaseAndWake.Run(ctx, w.rc, []string{w.key, w.key + ":wake"}, w.token).Int()
	if err == nil && n == 0 {
		return harness.ErrNotHeld
	}
	return err
}

func (*wakeLease) Token() uint64 { return 0 }

// TestSharedPoolStarvesABlockingWait: a lock whose waiters block on the
// server keeps, in pool, the shared connections from the holder's release,
// which waits for one until a waiter's block ends: far fewer turns than
// the same lock makes in contention, each client with a pool of its own.
func TestSharedPoolStarvesABlockingWait(t *testing.T) {
	t.Parallel()
	newLock := func(c *harness.Client) harness.Locker { return &blockingWait{c: c} }
	turns := map[string]int{}
	for _, name := range []string{"contention", "pool"} {
		res, err := scenarios.Run(context.Background(), name, newLock, runner.Options{Lock: "blocking-wait"})
		if err != nil {
			t.Fatal(err)
		}
		turns[name] = res.Stats.Acquires
		for _, checkerName := range []string{checker.CheckLock, checker.CheckResource} {
			if c := verdictOf(res, checkerName); c.Verdict != checker.OK && c.Verdict != checker.Unknown {
				t.Errorf("%s: %s %s (%s); a slow lock is still a safe one", name, checkerName, c.Verdict, c.Detail)
			}
		}
	}
	if turns["pool"]*4 > turns["contention"] {
		t.Errorf("%d acquires in pool, %d in contention; want the shared pool to starve the holder's release", turns["pool"], turns["contention"])
	}
}
