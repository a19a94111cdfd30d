package harness

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness/rediscmd"
	"github.com/locklab/locklab/history"
)

// phaseRun is one occurrence of a phase: one Acquire call, one Release, one
// critical section, one background goroutine. It counts its commands.
type phaseRun struct {
	phase failpoint.Phase
	// tookSent is when the command that took the key left the client, in
	// the history's time plus one; 0 until one did.
	tookSent atomic.Int64

	mu    sync.Mutex
	sent  int  // commands counted so far
	retry bool // the last one was refused with NOSCRIPT: the next is its retry
}

// next numbers the next command. A script's retry after NOSCRIPT (go-redis
// sends EVALSHA, then EVAL when the server does not have the script) keeps
// the number of the EVALSHA, so that a lock's k-th command is the same
// command whichever client first ran the script on the server; retried
// says its before-failpoint was already reached.
func (pr *phaseRun) next() (k int, retried bool) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.retry {
		pr.retry = false
		return pr.sent, true
	}
	pr.sent++
	return pr.sent, false
}

// refused marks the last command as refused with NOSCRIPT.
func (pr *phaseRun) refused() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.retry = true
}

// retrying reports whether the last command was refused with NOSCRIPT and
// its retry has not come yet. A client that loads the script before it
// retries (redis-py: EVALSHA, SCRIPT LOAD, EVALSHA) sends the SCRIPT LOAD
// in between; it counts in no phase, so that the retry keeps the number.
func (pr *phaseRun) retrying() bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.retry
}

type phaseKey struct{}

// withPhase marks ctx as a new occurrence of p; commands sent with it or a
// context derived from it count as p's.
func withPhase(ctx context.Context, p failpoint.Phase) context.Context {
	return context.WithValue(ctx, phaseKey{}, &phaseRun{phase: p})
}

// phaseOf finds the phase of a command. A lock that sends with a context of
// its own (not derived from the one it was given) gets the phase its
// worker is in.
func (c *Client) phaseOf(ctx context.Context) *phaseRun {
	if pr, ok := ctx.Value(phaseKey{}).(*phaseRun); ok {
		return pr
	}
	return c.phase.Load()
}

// Enter starts an occurrence of p in the worker (package runner's, not
// lock code's, to call): ctx carries it, and so does the client for
// commands whose context does not. The returned func
// ends it, back to the phase it interrupted (a nested acquire interrupts a
// critical section).
func (c *Client) Enter(ctx context.Context, p failpoint.Phase) (context.Context, func()) {
	ctx = withPhase(ctx, p)
	prev := c.phase.Swap(ctx.Value(phaseKey{}).(*phaseRun))
	return ctx, func() { c.phase.Store(prev) }
}

// TookAt is when the command that took the lock key in the acquire phase
// that ctx (from Enter) runs left the client, and false when no command of
// it was seen to take the key (a lock over SQL, etcd or ZooKeeper, or
// commands whose replies do not tell).
func (c *Client) TookAt(ctx context.Context) (time.Duration, bool) {
	pr := c.phaseOf(ctx)
	if pr == nil {
		return 0, false
	}
	at := pr.tookSent.Load()
	return time.Duration(at - 1), at > 0
}

// Sent is one command of a batch that a lock's client library sends, as
// its hook hands it to Commands: its words (the name first, as sent) and,
// once it ran, its reply in the terms of rediscmd.TookBy (a string, an
// int64, a bool, or nil for a null or a reply of another shape) and its
// error. The words are enough for the failpoints, the history's replies and
// telling which command took the lock, so the harness needs no client
// library's types.
type Sent struct {
	Args  []string
	Reply func() (any, error)
}

// Commands runs one command (or pipeline) of the lock, cmds, sent to node
// (its index in the lock's nodes; -1 for the inventory) by calling send,
// through the failpoints armed on the lock's commands (strike), and
// honours the client's crash and pause around it. A client library's hook
// (service/redis's, on go-redis) calls it for every batch: connection
// setup (rediscmd.ConnectionSetup) and commands sent outside any phase
// count in none and are only held by a pause and refused after a crash.
func (c *Client) Commands(ctx context.Context, node int, cmds []Sent, send func() error) error {
	pr := c.phaseOf(ctx)
	args := make([][]string, len(cmds))
	for i, cmd := range cmds {
		args[i] = cmd.Args
	}
	if pr == nil || rediscmd.ConnectionSetup(args) {
		return c.around(ctx, send)
	}
	sent := make([]sentCommand, len(cmds))
	for i, cmd := range cmds {
		sent[i] = sentCommand{args: cmd.Args, reply: cmd.Reply}
	}
	x := &exchange{h: c.history}
	return c.strike(ctx, pr, node, rediscmd.Name(args), sent, x, func() error { return c.around(ctx, x.wrap(send)) })
}

// strike runs one command (or pipeline) of the lock in phase run pr, sent
// to node, through the failpoints armed on the lock's commands: before it
// is sent, after it ran, and after the first one of an Acquire that took
// the key (keyWatch tells). send sends it, through x, which sees when it
// left for the node and when the node's reply came; the replies about the
// lock key are recorded (recordReplies). A go-redis command and a lock
// program's relayed one (Relay) both come through here.
func (c *Client) strike(ctx context.Context, pr *phaseRun, node int, name string, cmds []sentCommand, x *exchange, send func() error) error {
	if name == "SCRIPT" && pr.retrying() {
		// SCRIPT LOAD between a NOSCRIPT refusal and its retry (redis-py's
		// way) is part of that retry: it counts as nothing.
		return send()
	}
	k, retried := pr.next()
	what := fmt.Sprintf("%s (%s command %d)", name, pr.phase, k)
	at := func(point, words string) failpoint.At {
		return failpoint.At{Name: point, Client: c.id, Phase: pr.phase, Command: name, Words: words}
	}
	// The reply is dropped when any of the command's failpoints says so;
	// the first that did is where the record says it struck.
	drop, dropAt := false, failpoint.At{}
	if !retried {
		before := at(failpoint.BeforeCommand(pr.phase, k), "before "+what)
		if err := c.fire(ctx, before, false, &drop); err != nil {
			return err
		}
		if drop {
			dropAt = before
		}
	}
	watch := c.watchKey(ctx, pr, node, cmds)
	err := send()
	c.recordReplies(pr, node, cmds, x)
	took := watch.took(ctx)
	if err != nil && c.crashed.Load() {
		return err
	}
	if rediscmd.NoScript(err) {
		pr.refused()
		return err
	}
	points := []failpoint.At{at(failpoint.AfterCommand(pr.phase, k), "after "+what)}
	if took && pr.tookSent.CompareAndSwap(0, int64(x.call)+1) {
		points = append(points, at(failpoint.AfterTook, "after "+what))
	}
	for _, p := range points {
		hit := false
		if ferr := c.fire(ctx, p, true, &hit); ferr != nil {
			return ferr
		}
		if hit && !drop {
			drop, dropAt = true, p
		}
	}
	if drop {
		return c.dropReply(ctx, what, dropAt, node)
	}
	return err
}

// fire counts a hit of a command failpoint, reached at at, and does what
// it armed, except dropping the reply, which it leaves to the caller
// through drop.
func (c *Client) fire(ctx context.Context, at failpoint.At, sent bool, drop *bool) error {
	actions := c.points.Hit(at.Name, c.id)
	if len(actions) == 0 {
		return nil
	}
	defer c.points.Done()
	for _, a := range actions {
		if a.Kind == failpoint.ActionDrop {
			*drop = true
			continue
		}
		if err := c.actOnCommand(ctx, at, a, sent); err != nil {
			return err
		}
	}
	return nil
}

// actOnCommand does one action at a command. A crash before the command
// means it was never sent; after it, that its reply was never seen.
func (c *Client) actOnCommand(ctx context.Context, at failpoint.At, a failpoint.Action, sent bool) error {
	if a.Kind == failpoint.ActionCrash {
		c.crash(at.Words, at.Record(history.Op{Crux: a.Crux}))
		if sent {
			return ErrCrashed
		}
		return ErrNotSent
	}
	return c.act(ctx, at, a)
}

// errReplyDropped is what a client sees when a reply never came: a timeout.
type errReplyDropped struct{ after time.Duration }

func (e errReplyDropped) Error() string {
	return fmt.Sprintf("i/o timeout: no reply within %s (the reply was dropped by locklab)", e.after)
}
func (errReplyDropped) Timeout() bool   { return true }
func (errReplyDropped) Temporary() bool { return true }

// dropReply throws away the reply of a command that ran on the server: the
// client waits its read timeout (or its context's deadline) and sees a
// timeout, as when the reply is lost on the network: on the client's link
// to node (its index in Nodes; -1 for the inventory), at failpoint at.
func (c *Client) dropReply(ctx context.Context, what string, at failpoint.At, node int) error {
	start := c.history.Now()
	wait := c.timeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		wait = max(time.Until(dl), 0)
	}
	err := c.Sleep(ctx, wait)
	end := c.history.Now()
	target := &history.Target{Type: history.TargetLink}
	if node >= 0 {
		target.Nodes = []int{node}
	}
	c.history.Add(at.Record(history.Op{Client: c.id, Kind: history.KindFault, Call: start, Return: end, Fault: "reply dropped",
		FaultKind: failpoint.ActionKindName(failpoint.ActionDrop, at.Name), Target: target, Effect: history.EffectStall,
		Detail: fmt.Sprintf("the reply of %s was dropped: the command ran on the server, the client waited %s and saw a timeout",
			what, (end - start).Round(time.Millisecond))}))
	if err != nil {
		return err
	}
	return errReplyDropped{after: wait}
}
