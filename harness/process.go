package harness

import (
	"fmt"
	"strings"
	"time"
)

// Process is a client that is a real operating-system process: a lock
// written in another language, run by package program. A client with a
// Process attached crashes, pauses and has its clock skewed for real: its
// crash kills the process, its stop-the-world pause stops it (its own
// threads included) and its clock skew moves the process's wall clock.
// A Go lock attaches none and keeps its in-process crash, pause and skew.
type Process interface {
	// Kill ends the process and everything it started at once (SIGKILL),
	// with no cleanup: whatever it held stays held.
	Kill() error
	// Stop freezes the process and everything it started (SIGSTOP).
	Stop() error
	// Continue undoes Stop (SIGCONT).
	Continue() error
	// SetClock makes the process's wall clock run offset ahead of true time
	// (behind when negative) from now on; its monotonic clock is untouched.
	SetClock(offset time.Duration) error
	// Close kills the process if it still runs and waits for it to end; the
	// run calls it when the client closes.
	Close() error
}

// Attach makes p the process of this client: from now on the client's
// crash, pause and clock skew act on p as well, and closing the client
// closes p. A lock calls it once, when it starts its process.
func (c *Client) Attach(p Process) {
	c.mu.Lock()
	c.process = p
	skew := time.Duration(c.skew.Load())
	c.mu.Unlock()
	c.points.programAttached()
	if c.crashed.Load() {
		c.spoilf("client %d's process was attached after the client crashed; it was killed", c.id)
		p.Kill()
		return
	}
	if skew != 0 {
		if err := p.SetClock(skew); err != nil {
			c.spoilf("client %d: clock skew of %s did not reach its process: %v", c.id, skew, err)
		}
	}
}

// attached is the client's process, or nil.
func (c *Client) attached() Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.process
}

// Spoil says the run did not happen as written because of why (a lock
// program that printed garbage, exited or never answered, or a fault that
// could not reach it): the run's verdicts are then all unknown, with why as
// the reason. Only the first reason of a run is kept, so a program that
// fails in every client gives one line.
func (c *Client) Spoil(why string) { c.points.spoil(why) }

func (c *Client) spoilf(format string, args ...any) { c.Spoil(fmt.Sprintf(format, args...)) }

// Timeout is the client's Redis timeout: how long a command may wait for a
// reply before its outcome counts as unknown.
func (c *Client) Timeout() time.Duration { return c.timeout }

// Endpoints are the addresses a client dials, each through this client's
// own network links where it has them; a lock program gets them in its
// environment. Exactly one of Redis, Sentinels and Nodes is set, by topology.
type Endpoints struct {
	Redis     string   // the master of the single topology
	Sentinels []string // the Sentinels of the replicated topology
	Master    string   // the name the Sentinels know the master by
	Nodes     []string // the five masters of the redlock topology
}

// Endpoints are the addresses this client dials.
func (c *Client) Endpoints() Endpoints { return c.endpoints }

// spoil keeps the first reason a run was spoiled.
func (f *failpoints) spoil(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.spoiled == "" {
		f.spoiled = why
	}
}

// spoiledBy lists the reason the run was spoiled, if it was.
func (f *failpoints) spoiledBy() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.spoiled == "" {
		return nil
	}
	return []string{f.spoiled}
}

// programAttached gives up on the failpoints at the lock's own commands,
// which a program's commands never reach, so that the run does not wait
// for them; unfired still names them.
func (f *failpoints) programAttached() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.program {
		return
	}
	f.program, f.gaveUp = true, map[int]bool{}
	for i, fp := range f.armed {
		// The critical section's commands are the workload's, sent by locklab.
		if fp.Optional || !isCommandPoint(fp.Name) || strings.Contains(fp.Name, string(PhaseSection)) || f.hits[i] > fp.Skip {
			continue
		}
		f.gaveUp[i] = true
		if f.toFire--; f.toFire == 0 {
			close(f.allFired)
		}
	}
}
