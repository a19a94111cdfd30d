package program

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/program/relay"
)

// A lock program is kept warm between the runs of one warm deployment
// (cluster.Pool): at the end of a run its process is parked in the
// deployment's cluster.Kept, under its client's number, and the same
// client of the next run on that deployment takes it back, when it runs
// the same command with the same environment, rather than start an
// interpreter and its imports again. Between the two it is asked
// `reset`: it drops every lease and handle it holds, and answers ok.
//
// The relay's listeners (relay.Front), which are the addresses in the
// program's environment, stay with the process; the relay behind them is
// the run's own (relay.Attach), forwarding to that run's links through
// that run's failpoints. At the end of a run the relay closes every
// connection the program opened through it, before the reset, and the
// front refuses connections until the next run attaches its relay: so a
// connection the program keeps open can never reach the previous run's
// links, nor carry server-side state (a session, a SELECTed database, a
// transaction) from one run into the next. The program reconnects, as it
// does after a network fault; reconnecting is cheap, starting is not.
// Re-pointing a live connection at the new run's link instead would keep
// the program's socket but lose the server's half of it, which is worse.
//
// A process is ended, never kept, when anything may have left it in a
// state a fresh one would not be in: a crash (its SIGKILL), a SIGSTOP not
// undone by a SIGCONT, a clock moved by libfaketime (even back to zero:
// timers it armed meanwhile still fire by the skewed clock), a failed
// signal, a request it left unanswered, anything that spoiled the run
// from the program's side (garbage, an exit, silence), a reset not
// answered ok (a program that does not know `reset`: it is simply started
// anew), and a deployment that serves no other run (no Pool, -fresh). The
// run's verdict is not a reason: a lock that failed did so by what it
// sent, which the deployment's reset wipes from the servers and the
// `reset` request from the program; a program that keeps state past it
// would show up as a different verdict warm than fresh
// (TestWarmProgramSameVerdicts). On replicated, whose relayed Sentinels
// are the run's own, and where no relay reads the program's requests
// (its environment names the run's own links), it is never kept.

// keepKey is where a client's program is kept on its deployment: one per
// client number, whatever the command, so that a deployment keeps at most
// one process per client.
func keepKey(c *harness.Client) string { return "program/client " + strconv.Itoa(c.ID()) }

// starts and reuses count, over this process's life, the lock programs
// started and those taken back warm (Starts).
var starts, reuses atomic.Int64

// Starts reports how many lock programs were started so far, and how many
// times one kept warm served another run instead (obtain).
func Starts() (started, reused int64) { return starts.Load(), reuses.Load() }

// obtain is the program of command for client c: the one kept on c's
// deployment for c's number, when it can serve this run, or else a new one.
func obtain(c *harness.Client, command string) (*process, error) {
	if k := c.Kept(); k != nil {
		if w, ok := k.Take(keepKey(c)).(parked); ok {
			if p := w.p.resume(c, command); p != nil {
				reuses.Add(1)
				return p, nil
			}
		}
	}
	p, err := start(c, command)
	if err == nil {
		starts.Add(1)
	}
	return p, err
}

// parked is a process kept between runs; closing it ends the process.
type parked struct{ p *process }

func (w parked) Close() error { return w.p.end() }

// resume makes the parked p client c's program for this run: its relay
// forwards to c's links through c's failpoints. It ends p and returns nil
// when p cannot serve the run: another command, another environment
// (another TTL, timeout or session), or it died while parked.
func (p *process) resume(c *harness.Client, command string) *process {
	p.mu.Lock()
	dead := p.dead != nil
	p.mu.Unlock()
	e := c.Endpoints()
	if dead || p.command != command || p.front == nil || e.Unrelayed() != "" || e.SentinelRelay != nil {
		p.end()
		return nil
	}
	upstream, proto, err := relayed(e)
	if err != nil {
		p.end()
		return nil
	}
	r, err := relay.Attach(p.front, c, upstream, proto)
	if err != nil {
		p.end()
		return nil
	}
	if !slices.Equal(environment(c, r, nil), p.env) {
		r.Close()
		p.end()
		return nil
	}
	p.client.Store(c)
	p.relay = r
	p.stops.Store(0)
	p.unclean.Store(false)
	p.killed.Store(false)
	return p
}

// park keeps p on its client's deployment for the next run, once its
// relay closed every connection of this run and the program answered
// `reset` ok, and reports whether it did; when not, the caller ends p.
func (p *process) park() bool {
	c := p.client.Load()
	k := c.Kept()
	if k == nil || !k.Keeps() || p.front == nil || !p.reusable() {
		return false
	}
	p.relay.Close()
	p.relay = nil
	if !p.reset() {
		return false
	}
	return k.Keep(keepKey(c), parked{p})
}

// reusable reports whether nothing in this run may have left p in a state
// a fresh process would not be in (see above).
func (p *process) reusable() bool {
	p.mu.Lock()
	ok := p.dead == nil && len(p.pending) == 0
	p.mu.Unlock()
	return ok && !p.killed.Load() && p.stops.Load() == 0 && !p.unclean.Load()
}

// resetRequest asks a program to drop every lease and handle it holds,
// between two runs on the same deployment.
const resetRequest = "reset"

// reset asks the program to reset, and reports whether it answered ok.
// While it is parked it counts as killed on purpose: a program that
// exits at a request it does not know spoils no run, and is started anew.
func (p *process) reset() bool {
	p.killed.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), p.bound())
	defer cancel()
	answer, err := p.ask(ctx, resetRequest)
	return err == nil && answer == "ok"
}
