package harness

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// TestCommandFailpoints arms one action at a lock's own command and checks
// what Redis and the client saw.
func TestCommandFailpoints(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		point  string
		action failpoint.Action
		// wantErr is what the acquire's second command returns; wantSet
		// whether its SET reached Redis.
		wantErr func(error) bool
		wantSet bool
		fault   string // the fault op recorded on the client's row, if any
	}{
		{"crash before the command: never sent", failpoint.BeforeCommand(failpoint.PhaseAcquire, 2), failpoint.Crash(),
			func(err error) bool { return errors.Is(err, ErrCrashed) }, false, ""},
		{"crash after the command: it ran, its reply never seen", failpoint.AfterCommand(failpoint.PhaseAcquire, 2), failpoint.Crash(),
			func(err error) bool { return errors.Is(err, ErrCrashed) }, true, ""},
		{"crash after the command that took the key", failpoint.AfterTook, failpoint.Crash(),
			func(err error) bool { return errors.Is(err, ErrCrashed) }, true, ""},
		{"dropped reply: it ran, the client sees a timeout", failpoint.AfterCommand(failpoint.PhaseAcquire, 2), failpoint.DropReply(),
			func(err error) bool {
				var to interface{ Timeout() bool }
				return errors.As(err, &to) && to.Timeout()
			}, true, "reply dropped"},
		{"delay before the command", failpoint.BeforeCommand(failpoint.PhaseAcquire, 2), failpoint.Sleep(50 * time.Millisecond),
			func(err error) bool { return err == nil }, true, "delayed command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, n := newTestClient(t, []failpoint.Point{{Name: tt.point, Client: 0, Action: tt.action}})
			c.timeout = 100 * time.Millisecond // a dropped reply waits this long
			actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
			defer leave()
			// Command 1 names another key, so it neither took "lock" nor
			// matches a failpoint on command 2.
			if err := c.Redis().Set(actx, "other", "x", 0).Err(); err != nil {
				t.Fatalf("command 1: %v", err)
			}
			err := c.Redis().SetNX(actx, "lock", "c0-1", time.Minute).Err()
			if !tt.wantErr(err) {
				t.Errorf("command 2 returned %v", err)
			}
			exists, _ := n.(sentinel.Node).Admin().Exists(ctx, "lock").Result()
			if got := exists == 1; got != tt.wantSet {
				t.Errorf("key set on Redis = %v, want %v", got, tt.wantSet)
			}
			if tt.fault != "" && !hasFault(c.history.Ops(), tt.fault) {
				t.Errorf("history holds no %q fault: %+v", tt.fault, c.history.Ops())
			}
			if lines := c.points.Unfired(); len(lines) > 0 {
				t.Errorf("failpoint did not fire: %v", lines)
			}
		})
	}
}

func hasFault(ops []history.Op, fault string) bool {
	for _, op := range ops {
		if op.Kind == history.KindFault && op.Fault == fault {
			return true
		}
	}
	return false
}

// TestPhasesCountTheirOwnCommands: each Acquire starts counting again, and a
// background goroutine's commands are not the acquire's.
func TestPhasesCountTheirOwnCommands(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestClient(t, []failpoint.Point{{Name: failpoint.BeforeCommand(failpoint.PhaseAcquire, 1), Client: 0, Times: 2, Action: failpoint.Sleep(time.Millisecond)}})
	for range 2 {
		actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
		c.Redis().Ping(actx)
		leave()
	}
	done := make(chan struct{})
	c.Go(func(ctx context.Context) { c.Redis().Ping(ctx); close(done) })
	<-done
	if got := c.points.Reached(failpoint.BeforeCommand(failpoint.PhaseAcquire, 1), 0); got != 2 {
		t.Errorf("acquire command 1 reached %d times, want 2 (one per acquire)", got)
	}
	if got := c.points.Reached(failpoint.BeforeCommand(failpoint.PhaseBackground, 1), 0); got != 1 {
		t.Errorf("background command 1 reached %d times, want 1", got)
	}
}

// TestScriptRetryKeepsItsNumber: go-redis runs a script with EVALSHA and,
// on a server that lacks it, EVAL; both are one command of the lock, so the
// numbering does not depend on which client ran the script first.
func TestScriptRetryKeepsItsNumber(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestClient(t, nil)
	script := redis.NewScript(`return 1`)
	actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
	defer leave()
	if err := script.Run(actx, c.Redis(), []string{"lock"}).Err(); err != nil {
		t.Fatal(err)
	}
	c.Redis().Ping(actx)
	for k, want := range map[int]int{1: 1, 2: 1, 3: 0} {
		if got := c.points.Reached(failpoint.BeforeCommand(failpoint.PhaseAcquire, k), 0); got != want {
			t.Errorf("before acquire command %d reached %d times, want %d", k, got, want)
		}
		if got := c.points.Reached(failpoint.AfterCommand(failpoint.PhaseAcquire, k), 0); got != want {
			t.Errorf("after acquire command %d reached %d times, want %d", k, got, want)
		}
	}
}

// nilOnSuccess takes the key when it is free and answers nil, as SET NX
// GET does; when the key is held it answers its PTTL, a positive number
// (Redisson's lock script answers so).
var nilOnSuccess = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 0 then
	redis.call("HINCRBY", KEYS[1], ARGV[1], 1)
	redis.call("PEXPIRE", KEYS[1], 60000)
	return nil
end
return redis.call("PTTL", KEYS[1])`)

// TestAfterTook: the failpoint after the command that took the key fires
// after the command that made the key exist, whatever its reply looks like,
// and never after one that found the key held; the same through a lock
// program's relay.
func TestAfterTook(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		acquire func(ctx context.Context, c *Client) error // the acquire's one command
	}{
		{"SET NX GET", func(ctx context.Context, c *Client) error {
			return c.Redis().SetArgs(ctx, "lock", "mine", redis.SetArgs{Mode: "NX", Get: true}).Err()
		}},
		{"script answering nil when it took the key", func(ctx context.Context, c *Client) error {
			return nilOnSuccess.Run(ctx, c.Redis(), []string{"lock"}, "c0").Err()
		}},
		{"relayed SET NX GET", relayed("SET", "lock", "mine", "NX", "GET")},
		{"relayed script", relayed("EVAL", nilOnSuccess.Hash(), "1", "lock", "c0")},
	}
	for _, tt := range tests {
		for _, held := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, key held %v", tt.name, held), func(t *testing.T) {
				c, n := newTestClient(t, []failpoint.Point{{Name: failpoint.AfterTook, Client: 0, Optional: true, Action: failpoint.Crash()}})
				if held {
					if err := n.(sentinel.Node).Admin().Set(ctx, "lock", "theirs", time.Minute).Err(); err != nil {
						t.Fatal(err)
					}
				}
				actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
				err := tt.acquire(actx, c)
				leave()
				if got := c.points.Reached(failpoint.AfterTook, 0); got != map[bool]int{false: 1, true: 0}[held] {
					t.Errorf("after the command that took the key reached %d times (err %v)", got, err)
				}
				if crashed := errors.Is(err, ErrCrashed); crashed == held {
					t.Errorf("acquire returned %v; crashed %v, want %v", err, crashed, !held)
				}
				if exists, _ := n.(sentinel.Node).Admin().Exists(ctx, "lock").Result(); exists != 1 {
					t.Errorf("the key is gone: the crash must leave what the command wrote")
				}
			})
		}
	}
}

// relayed is an acquire whose one command, with words args, passes the
// client's relay, as a lock program's does, and runs on the client's node.
// EVAL's first word after the name is the script's SHA, loaded first, so
// that the command the relay judges is the EVALSHA a client would send.
func relayed(args ...string) func(ctx context.Context, c *Client) error {
	return func(ctx context.Context, c *Client) error {
		if args[0] == "EVAL" {
			if err := nilOnSuccess.Load(ctx, c.testProbe()).Err(); err != nil {
				return err
			}
			args = append([]string{"EVALSHA"}, args[1:]...)
		}
		words := make([]any, len(args))
		for i, a := range args {
			words[i] = a
		}
		return NewRelay(c).Command(0, args, func() (any, error) {
			return redisReply(c.testProbe().Do(ctx, words...))
		})
	}
}

// TestAfterTookNotAnotherClientsTake: when another client's command on the
// key reaches the node while an opaque command is on its way, the change of
// the key's state may be the other's, so the command is not taken to have
// taken the key. Here the other client takes the key first, and the
// script, refused, answers a positive PTTL.
func TestAfterTookNotAnotherClientsTake(t *testing.T) {
	ctx := context.Background()
	c, n := newTestClient(t, []failpoint.Point{{Name: failpoint.AfterTook, Client: 0, Optional: true, Action: failpoint.Crash()}})
	if err := nilOnSuccess.Load(ctx, c.testProbe()).Err(); err != nil {
		t.Fatal(err)
	}
	_, leave := c.Enter(ctx, failpoint.PhaseAcquire)
	defer leave()
	var reply any
	err := NewRelay(c).Command(0, []string{"EVALSHA", nilOnSuccess.Hash(), "1", "lock", "c0"}, func() (any, error) {
		gen, _ := c.points.Inflight().Start(0) // the other client's SET NX, on its way
		if err := n.(sentinel.Node).Admin().SetNX(ctx, "lock", "theirs", time.Minute).Err(); err != nil {
			return nil, err
		}
		c.points.Inflight().End(0, gen)
		var err error
		reply, err = redisReply(c.testProbe().Do(ctx, "EVALSHA", nilOnSuccess.Hash(), 1, "lock", "c0"))
		return reply, err
	})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if pttl, ok := reply.(int64); !ok || pttl <= 0 {
		t.Fatalf("the script answered %v, want the other's PTTL", reply)
	}
	if got := c.points.Reached(failpoint.AfterTook, 0); got != 0 {
		t.Errorf("after the command that took the key reached %d times; the other client took it", got)
	}
}

// TestLockKeyIn: a command names the lock key by the workload's key
// itself, or, when its meaning is known, by a key that holds it as a
// library prefixes it; a fencing counter's INCR and a script name it only
// by the key itself.
func TestLockKeyIn(t *testing.T) {
	c := &Client{key: "lock"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"SET", "lock", "t", "NX", "PX", "200"}, "lock"},
		{[]string{"SET", "app:orders:lock", "t", "NX", "PX", "1000"}, "app:orders:lock"},
		{[]string{"GET", "app:orders:lock"}, "app:orders:lock"},
		{[]string{"INCR", "lock:fence"}, ""},
		{[]string{"EVALSHA", "abc", "1", "app:orders:lock", "t"}, ""},
		{[]string{"EVALSHA", "abc", "2", "lock:fence", "lock", "t"}, "lock"},
		{[]string{"SET", "locksmith", "t", "NX"}, ""},
		{[]string{"SET", "other", "t", "NX"}, ""},
	} {
		got, ok := c.lockKeyIn(tt.args)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("lockKeyIn(%q) = %q, %v; want %q", tt.args, got, ok, tt.want)
		}
	}
}
