package harness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/locklab/locklab/failpoint"
)

// TestRelayCommand: a relayed command (a lock program's) meets the same
// failpoints as a go-redis one, in the worker's phase.
func TestRelayCommand(t *testing.T) {
	ctx := context.Background()
	ok := func(reply any) func() (any, error) { return func() (any, error) { return reply, nil } }
	t.Run("phases", func(t *testing.T) {
		c, _ := newTestClient(t, nil)
		r := NewRelay(c)
		_, leave := c.Enter(ctx, failpoint.PhaseAcquire)
		r.Command(0, []string{"CLIENT", "SETNAME", "x"}, ok("OK")) // setup: no phase
		r.Command(0, []string{"PING"}, ok("PONG"))                 // a health check: no phase
		r.Command(0, []string{"SET", "lock", "t", "NX", "PX", "100"}, ok("OK"))
		leave()
		_, leave = c.Enter(ctx, failpoint.PhaseSection)
		r.Command(0, []string{"PEXPIRE", "lock", "100"}, ok(int64(1))) // the program was asked nothing
		leave()
		r.Command(0, []string{"PEXPIRE", "lock", "100"}, ok(int64(1)))
		for name, want := range map[string]int{
			failpoint.BeforeCommand(failpoint.PhaseAcquire, 1): 1, failpoint.AfterTook: 1, failpoint.BeforeCommand(failpoint.PhaseAcquire, 2): 0,
			failpoint.BeforeCommand(failpoint.PhaseSection, 1): 0, failpoint.BeforeCommand(failpoint.PhaseBackground, 1): 1, failpoint.BeforeCommand(failpoint.PhaseBackground, 2): 1,
		} {
			if got := c.points.Reached(name, 0); got != want {
				t.Errorf("%s reached %d times, want %d", name, got, want)
			}
		}
	})
	t.Run("script load keeps the number", func(t *testing.T) {
		// redis-py: EVALSHA, refused; SCRIPT LOAD; EVALSHA again.
		c, _ := newTestClient(t, nil)
		r := NewRelay(c)
		_, leave := c.Enter(ctx, failpoint.PhaseRelease)
		defer leave()
		noscript := errors.New("NOSCRIPT No matching script")
		if err := r.Command(0, []string{"EVALSHA", "abc", "1", "lock"}, func() (any, error) { return nil, noscript }); err != noscript {
			t.Errorf("EVALSHA refused: %v, want the reply's error as it came", err)
		}
		r.Command(0, []string{"SCRIPT", "LOAD", "src"}, ok("abc"))
		r.Command(0, []string{"EVALSHA", "abc", "1", "lock"}, ok(int64(1)))
		for k, want := range map[int]int{1: 1, 2: 0} {
			if got := c.points.Reached(failpoint.AfterCommand(failpoint.PhaseRelease, k), 0); got != want {
				t.Errorf("after release command %d reached %d times, want %d", k, got, want)
			}
		}
	})
	t.Run("dropped reply", func(t *testing.T) {
		c, _ := newTestClient(t, []failpoint.Point{{Name: failpoint.AfterCommand(failpoint.PhaseRelease, 1), Client: 0, Action: failpoint.DropReply()}})
		c.timeout = 50 * time.Millisecond
		r := NewRelay(c)
		_, leave := c.Enter(ctx, failpoint.PhaseRelease)
		defer leave()
		sent := false
		start := time.Now()
		err := r.Command(0, []string{"EVALSHA", "abc", "1", "lock"}, func() (any, error) { sent = true; return int64(1), nil })
		var to interface{ Timeout() bool }
		if !sent || !errors.As(err, &to) || !to.Timeout() {
			t.Errorf("sent %v, err %v: want it sent, then a timeout", sent, err)
		}
		if waited := time.Since(start); waited < c.timeout {
			t.Errorf("returned after %s, before the client's timeout", waited)
		}
		if !hasFault(c.history.Ops(), "reply dropped") {
			t.Errorf("no reply dropped fault recorded")
		}
	})
	t.Run("crash before the command", func(t *testing.T) {
		c, _ := newTestClient(t, []failpoint.Point{{Name: failpoint.BeforeCommand(failpoint.PhaseAcquire, 1), Client: 0, Action: failpoint.Crash()}})
		r := NewRelay(c)
		_, leave := c.Enter(ctx, failpoint.PhaseAcquire)
		defer leave()
		sent := false
		err := r.Command(0, []string{"SET", "lock", "t"}, func() (any, error) { sent = true; return "OK", nil })
		if sent || !errors.Is(err, ErrCrashed) || !c.Crashed() {
			t.Errorf("sent %v, err %v, crashed %v: want it never sent, the client crashed", sent, err, c.Crashed())
		}
	})
}
