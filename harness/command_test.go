package harness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/history"
)

// TestCommandFailpoints arms one action at a lock's own command and checks
// what Redis and the client saw.
func TestCommandFailpoints(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		point  string
		action Action
		// wantErr is what the acquire's second command returns; wantSet
		// whether its SET reached Redis.
		wantErr func(error) bool
		wantSet bool
		fault   string // the fault op recorded on the client's row, if any
	}{
		{"crash before the command: never sent", BeforeCommand(PhaseAcquire, 2), Crash(),
			func(err error) bool { return errors.Is(err, ErrCrashed) }, false, ""},
		{"crash after the command: it ran, its reply never seen", AfterCommand(PhaseAcquire, 2), Crash(),
			func(err error) bool { return errors.Is(err, ErrCrashed) }, true, ""},
		{"crash after the command that took the key", AfterTook, Crash(),
			func(err error) bool { return errors.Is(err, ErrCrashed) }, true, ""},
		{"dropped reply: it ran, the client sees a timeout", AfterCommand(PhaseAcquire, 2), DropReply(),
			func(err error) bool {
				var to interface{ Timeout() bool }
				return errors.As(err, &to) && to.Timeout()
			}, true, "reply dropped"},
		{"delay before the command", BeforeCommand(PhaseAcquire, 2), Sleep(50 * time.Millisecond),
			func(err error) bool { return err == nil }, true, "delayed command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, n := newTestClient(t, []Failpoint{{Name: tt.point, Client: 0, Action: tt.action}})
			c.timeout = 100 * time.Millisecond // a dropped reply waits this long
			actx, leave := c.enter(ctx, PhaseAcquire)
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
			exists, _ := n.Admin().Exists(ctx, "lock").Result()
			if got := exists == 1; got != tt.wantSet {
				t.Errorf("key set on Redis = %v, want %v", got, tt.wantSet)
			}
			if tt.fault != "" && !hasFault(c.history.Ops(), tt.fault) {
				t.Errorf("history holds no %q fault: %+v", tt.fault, c.history.Ops())
			}
			if lines := c.points.unfired(); len(lines) > 0 {
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
	c, _ := newTestClient(t, []Failpoint{{Name: BeforeCommand(PhaseAcquire, 1), Client: 0, Times: 2, Action: Sleep(time.Millisecond)}})
	for range 2 {
		actx, leave := c.enter(ctx, PhaseAcquire)
		c.Redis().Ping(actx)
		leave()
	}
	done := make(chan struct{})
	c.Go(func(ctx context.Context) { c.Redis().Ping(ctx); close(done) })
	<-done
	if got := c.points.reached[BeforeCommand(PhaseAcquire, 1)][0]; got != 2 {
		t.Errorf("acquire command 1 reached %d times, want 2 (one per acquire)", got)
	}
	if got := c.points.reached[BeforeCommand(PhaseBackground, 1)][0]; got != 1 {
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
	actx, leave := c.enter(ctx, PhaseAcquire)
	defer leave()
	if err := script.Run(actx, c.Redis(), []string{"lock"}).Err(); err != nil {
		t.Fatal(err)
	}
	c.Redis().Ping(actx)
	for k, want := range map[int]int{1: 1, 2: 1, 3: 0} {
		if got := c.points.reached[BeforeCommand(PhaseAcquire, k)][0]; got != want {
			t.Errorf("before acquire command %d reached %d times, want %d", k, got, want)
		}
		if got := c.points.reached[AfterCommand(PhaseAcquire, k)][0]; got != want {
			t.Errorf("after acquire command %d reached %d times, want %d", k, got, want)
		}
	}
}

func TestTookKey(t *testing.T) {
	ctx := context.Background()
	boolCmd := func(v bool, args ...any) redis.Cmder {
		c := redis.NewBoolCmd(ctx, args...)
		c.SetVal(v)
		return c
	}
	status := func(v string, args ...any) redis.Cmder {
		c := redis.NewStatusCmd(ctx, args...)
		c.SetVal(v)
		return c
	}
	script := func(v any, args ...any) redis.Cmder {
		c := redis.NewCmd(ctx, args...)
		c.SetVal(v)
		return c
	}
	tests := []struct {
		name string
		cmd  redis.Cmder
		want bool
	}{
		{"SET NX took it", boolCmd(true, "set", "lock", "t", "px", 100, "nx"), true},
		{"SET NX refused", boolCmd(false, "set", "lock", "t", "px", 100, "nx"), false},
		{"another key", boolCmd(true, "set", "other", "t"), false},
		{"SET OK", status("OK", "set", "lock", "t"), true},
		{"script returning 1", script(int64(1), "evalsha", "abc", 1, "lock", "t"), true},
		{"script returning 0", script(int64(0), "evalsha", "abc", 1, "lock", "t"), false},
		{"script returning OK", script("OK", "eval", "src", 1, "lock", "t"), true},
		{"script on another key", script(int64(1), "eval", "src", 1, "other", "lock"), false},
	}
	for _, tt := range tests {
		if got := tookKey([]redis.Cmder{tt.cmd}, "lock"); got != tt.want {
			t.Errorf("%s: tookKey = %v, want %v", tt.name, got, tt.want)
		}
	}
}
