package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/broken"
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	redisservice "github.com/locklab/locklab/service/redis"
)

// The locks below are written as users write them, with no locklab hook:
// each has a bug on an error path that only a fault at its own commands
// makes run (and those without a watchdog also lack renewal). The scenarios
// written for them must catch each one and pass the catalogue's correct
// lock; explore must find each one blind (blind_explore_test.go).

var compareAndDelete = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// blindLock takes the lock with SET NX PX; its flaws are switched on one by one.
type blindLock struct {
	c *harness.Client
	n int
	// timeoutIsSuccess treats an acquire that got no reply as taken.
	timeoutIsSuccess bool
	// fallbackDel deletes the key with a plain DEL when the release got no reply.
	fallbackDel bool
	// zombieWatchdog renews by overwriting the key (SET XX PX, no owner
	// check) and stops only after a release that succeeded.
	zombieWatchdog bool
	// quittingWatchdog renews with an owner check every TTL/3, as the
	// catalogue's watchdog does, but stops for good at its first failed
	// renewal while the holder keeps working.
	quittingWatchdog bool
}

type blindLease struct {
	l     *blindLock
	key   string
	token string
	stop  chan struct{}
}

func (l *blindLock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	l.n++
	token := fmt.Sprintf("c%d-%d", l.c.ID(), l.n)
	ok, err := redisservice.Of(l.c).SetNX(ctx, key, token, l.c.TTL()).Result()
	switch {
	case err != nil && !(l.timeoutIsSuccess && isTimeout(err)):
		return nil, err
	case err == nil && !ok:
		return nil, harness.ErrNotAcquired
	}
	lease := &blindLease{l: l, key: key, token: token, stop: make(chan struct{})}
	switch {
	case l.zombieWatchdog:
		l.c.Go(lease.renew)
	case l.quittingWatchdog:
		l.c.Go(lease.renewUntilError)
	}
	return lease, nil
}

func (b *blindLease) renew(ctx context.Context) {
	tick := time.NewTicker(b.l.c.TTL() / 3)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			redisservice.Of(b.l.c).SetXX(ctx, b.key, b.token, b.l.c.TTL())
		}
	}
}

var compareAndExpire = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// renewUntilError renews while the key is ours, and gives up at the first
// renewal that fails, as if the lease were gone.
func (b *blindLease) renewUntilError(ctx context.Context) {
	ttl := b.l.c.TTL()
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := compareAndExpire.Run(ctx, redisservice.Of(b.l.c), []string{b.key}, b.token, ttl.Milliseconds()).Int()
		if err != nil || n == 0 {
			return
		}
	}
}

func (b *blindLease) Release(ctx context.Context) error {
	n, err := compareAndDelete.Run(ctx, redisservice.Of(b.l.c), []string{b.key}, b.token).Int()
	if err != nil {
		if b.l.fallbackDel && isTimeout(err) {
			return redisservice.Of(b.l.c).Del(ctx, b.key).Err()
		}
		return err
	}
	close(b.stop)
	if n == 0 {
		return harness.ErrNotHeld
	}
	return nil
}

func (*blindLease) Token() uint64 { return 0 }

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// blindLocks are the hookless broken locks above, each on the topology it
// is written for: what explore must find blind, without their scenarios.
// Locks with no watchdog (Redlock has none either) are explored with work bounded by the lease
// (faults leaves out the kinds that make it outlive the lease), as their
// user would say with -faults: otherwise the missing renewal, a bug of
// its own, is found first and hides the one the lock was written for.
// finds names the faults of which the first bug's signature must name one.
var blindLocks = []struct {
	name     string
	topology cluster.Topology
	new      harness.NewLocker
	faults   []string
	finds    []string
}{
	{"fallback-del", cluster.Single, func(c *harness.Client) harness.Locker { return &blindLock{c: c, fallbackDel: true} },
		boundedWork, []string{"lost reply of release", "black hole"}},
	{"timeout-is-success", cluster.Single, func(c *harness.Client) harness.Locker { return &blindLock{c: c, timeoutIsSuccess: true} },
		boundedWork, []string{"lost reply", "black hole", "partition", "cut holder"}},
	{"zombie-watchdog", cluster.Single, func(c *harness.Client) harness.Locker { return &blindLock{c: c, zombieWatchdog: true} },
		nil, []string{"cut", "partition", "renewal", "black hole", "lost reply", "pause"}},
	{"quitting-watchdog", cluster.Single, func(c *harness.Client) harness.Locker { return &blindLock{c: c, quittingWatchdog: true} },
		nil, []string{"renewal", "cut", "partition", "black hole", "lost reply"}},
	{"slow-redlock", cluster.Redlock, broken.NewRedlockNoElapsed,
		boundedWork, []string{"slow nodes", "pause node", "latency", "delay"}},
}

// boundedWork is the fault space of a lock whose work never outlives its
// lease.
var boundedWork = []string{"-slow-work,-cut-renewal,-drop-renewal,-slow-renewal"}

// TestBlindScenarios: each scenario catches the lock whose bug it makes run,
// and the catalogue's correct lock for the topology passes it.
func TestBlindScenarios(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scenario string
		broken   harness.NewLocker
		checker  string
		want     checker.Verdict
		fix      harness.NewLocker
	}{
		{"lost-release-reply", func(c *harness.Client) harness.Locker { return &blindLock{c: c, fallbackDel: true} },
			checker.CheckLock, checker.Illegal, reference.NewWatchdogLock},
		{"lost-acquire-reply", func(c *harness.Client) harness.Locker { return &blindLock{c: c, timeoutIsSuccess: true} },
			checker.CheckLock, checker.Illegal, reference.NewWatchdogLock},
		{"holder-cut-off", func(c *harness.Client) harness.Locker { return &blindLock{c: c, zombieWatchdog: true} },
			checker.CheckLiveness, checker.Stuck, reference.NewWatchdogLock},
		{"redlock-slow-nodes", broken.NewRedlockNoElapsed,
			checker.CheckLock, checker.Illegal, reference.NewRedlock},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			expect(t, func() []string {
				res := settled(t, func() (*runner.Result, error) {
					return scenarios.Run(context.Background(), tc.scenario, tc.broken, runner.Options{Dir: t.TempDir()})
				})
				if got := res.Verdicts[tc.checker]; got != tc.want {
					return []string{fmt.Sprintf("broken lock: %s checker says %s, want %s (%s)", tc.checker, got, tc.want, checksOf(res))}
				}
				return nil
			})
			expect(t, func() []string {
				res := settled(t, func() (*runner.Result, error) {
					return scenarios.Run(context.Background(), tc.scenario, tc.fix, runner.Options{Dir: t.TempDir()})
				})
				return notOK(t, res, "correct lock")
			})
		})
	}
}

// checksOf is every check of res in one line, for a message.
func checksOf(res *runner.Result) string {
	var parts []string
	for _, c := range res.Checks {
		parts = append(parts, fmt.Sprintf("%s: %s: %s", c.Checker, c.Verdict, c.Detail))
	}
	return strings.Join(parts, "; ")
}

// notOK is a line for each checker of res, a correct lock's run, that is
// not ok. A failure called the lock's own fails t at once: a loaded machine
// may excuse a run that missed, never a false claim of a bug.
func notOK(t *testing.T, res *runner.Result, who string) []string {
	t.Helper()
	var missed []string
	for _, c := range res.Checks {
		if c.Kind == checker.Own {
			t.Errorf("%s: %s %s called its own: %s (%s)", who, c.Checker, c.Verdict, c.Detail, c.KindWhy)
		}
		if c.Verdict != checker.OK {
			missed = append(missed, fmt.Sprintf("%s: %s checker says %s, want ok (%s)", who, c.Checker, c.Verdict, c.Detail))
		}
	}
	return missed
}

// TestDroppedConnection: the holder's connections closed right after it
// acquires cost a correct lock nothing, and the drop did strike.
func TestDroppedConnection(t *testing.T) {
	t.Parallel()
	expect(t, func() []string {
		res := settled(t, func() (*runner.Result, error) {
			return scenarios.Run(context.Background(), "dropped-connection", reference.NewWatchdogLock, runner.Options{Dir: t.TempDir()})
		})
		if len(res.Spoiled) > 0 || len(res.Missed) > 0 {
			t.Errorf("the drop did not strike: %q %q", res.Spoiled, res.Missed)
		}
		return notOK(t, res, "correct lock")
	})
}
