package harness

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness/rediscmd"
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
	// Close kills the process if it still runs and waits for it to end, or
	// parks it, asked to forget what it holds, for the same client of its
	// deployment's next run (Kept); the run calls it when the client closes.
	Close() error
	// Pid is the process's id on this machine: the run reads how long its
	// threads, and those of every process it started, waited for a core.
	Pid() int
	// Relayed reports whether the process's Redis commands pass through a
	// relay that runs each of them through a Relay, so that faults at the
	// lock's own commands strike them. When they do not, such faults are
	// given up on: the run does not wait for them and says why.
	Relayed() bool
}

// Attach makes p the process of this client: from now on the client's
// crash, pause and clock skew act on p as well, and closing the client
// closes p. A lock calls it once, when it starts its process.
func (c *Client) Attach(p Process) {
	c.mu.Lock()
	c.process = p
	skew := time.Duration(c.skew.Load())
	c.mu.Unlock()
	if !p.Relayed() {
		c.points.GiveUpCommands(c.endpoints.Unrelayed())
	}
	if c.crashed.Load() {
		c.spoilf("client %d's process was attached after the client crashed; it was killed", c.id)
		p.Kill()
		return
	}
	if skew != 0 {
		c.skewProcess(p, skew)
	}
}

// skewProcess moves p's wall clock by d, or spoils the run.
func (c *Client) skewProcess(p Process, d time.Duration) {
	if err := p.SetClock(d); err != nil {
		c.spoilf("clock skew of %s did not reach client %d's process: %v", d, c.id, err)
	}
}

// attached is the client's process, or nil.
func (c *Client) attached() Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.process
}

// ProcessPid is the id of the client's process (Attach), or 0 when none
// is attached.
func (c *Client) ProcessPid() int {
	if p := c.attached(); p != nil {
		return p.Pid()
	}
	return 0
}

// Program reports whether a lock program is attached (Attach): it dials
// what it is told, not the client's links.
func (c *Client) Program() bool { return c.attached() != nil }

// Spoil says the run did not happen as written because of why (a lock
// program that printed garbage, exited or never answered, or a fault that
// could not reach it): the run's verdicts are then all unknown, with why as
// the reason. Only the first reason of a run is kept, so a program that
// fails in every client gives one line.
func (c *Client) Spoil(why string) { c.points.Spoil(why) }

func (c *Client) spoilf(format string, args ...any) { c.Spoil(fmt.Sprintf(format, args...)) }

// Timeout is the client's Redis timeout: how long a command may wait for a
// reply before its outcome counts as unknown.
func (c *Client) Timeout() time.Duration { return c.timeout }

// Endpoints are the addresses a client dials, each through this client's
// own network links where it has them; a lock program gets them in its
// environment. Exactly one of Redis, Sentinels, Nodes, MySQL, Postgres
// and Env is set, by topology.
type Endpoints struct {
	Redis     string   // the master of the single topology
	Sentinels []string // the Sentinels of the replicated topology
	Master    string   // the name the Sentinels know the master by
	Nodes     []string // the five masters of the redlock topology
	// Links are, on the replicated topology, the client's links to its
	// data nodes (the first master, then the replicas): what a program's
	// relay forwards to, the nodes Sentinel names being any of them.
	Links []string
	// SentinelRelay, on the replicated topology, starts the relayed
	// Sentinels that name a program's relay in place of the data nodes.
	SentinelRelay SentinelRelayer
	// MySQL is the lock table's server of the mariadb topology, as a URL
	// most languages' clients take: mysql://USER[:PASSWORD]@HOST:PORT/locklab.
	MySQL    string
	Postgres string // a postgres:// URL of the lock table's server (postgres topology)
	// Env is the environment of a service started through the seam
	// (Dialer.Env), as NAME=VALUE.
	Env []string
}

// SentinelRelayer starts a lock program's relayed Sentinels (package
// service/redis/sentinel): one per Sentinel, each passing the program's
// requests to it and rewriting each data node's address in its replies
// to relays[i], the program's relay to node i of Endpoints.Links, so that
// the master Sentinel names, after a failover too, is one the program
// dials through its relay and its client's links.
type SentinelRelayer interface {
	// RelaySentinels starts them and returns their addresses, in place
	// of Endpoints.Sentinels, and what stops them.
	RelaySentinels(relays []string) (addrs []string, stop io.Closer, err error)
}

// Kept is what the client's deployment keeps running between its runs,
// nil for a client of no cluster: where a lock program leaves its process
// for the same client of the next run (cluster.Kept).
func (c *Client) Kept() *cluster.Kept { return c.kept }

// Endpoints are the addresses this client dials.
func (c *Client) Endpoints() Endpoints { return c.endpoints }

// Relay is the seam through which the Redis commands of a lock that pass no
// go-redis hook of the client (a lock program's: package program relays its
// connections) meet the failpoints armed on the lock's own commands, with
// the same rules as a go-redis command. One per client.
type Relay struct {
	c *Client

	mu         sync.Mutex
	background *phaseRun   // the commands the program sent unasked
	warming    atomic.Bool // in Warmup: nothing counts, nothing strikes
}

// Warmup runs f, a lock's start-up exchange (see Warmer), with the
// commands it makes the lock send counted in no phase and struck by no
// failpoint: they are not the workload's.
func (r *Relay) Warmup(f func() error) error {
	r.warming.Store(true)
	defer r.warming.Store(false)
	return f()
}

// NewRelay is the Relay of client c.
func NewRelay(c *Client) *Relay { return &Relay{c: c} }

// Command runs one command of the lock, with words args (the name first),
// sent to lock node node (its index in the client's Nodes; 0 with one
// master), through the failpoints armed on the lock's commands. send sends
// it to Redis and returns the reply: a string (a status or a bulk string),
// an int64, a bool, or nil for any other reply (an array, a null), and as
// err a Redis error reply (an error with a RedisError method, as go-redis's
// redis.Error, so that the history tells it from no reply) or what broke
// the connection.
//
// Command returns send's own error (nil, a Redis error reply, or what broke
// the connection) when nothing struck the reply: the caller hands the reply
// on as it came, if it got one. Any other error means it must not: the
// client crashed
// at the command (before it was sent, or before its reply was seen), the
// run ended, or the reply was dropped, in which case Command has already
// waited the client's timeout and recorded the "reply dropped" fault, and
// the caller must close the connection so that the lock sees a timeout and
// never a late reply. A failpoint's pause or sleep holds the command (or its
// reply) inside Command for as long as it lasts; a crash kills the process.
//
// The phase is the worker's: a command sent while the worker waits for the
// program's answer to acquire counts in that acquire, and likewise for
// release. One sent while the program was asked nothing (the worker is in
// its critical section, which locklab runs, or between cycles) is the
// program's own background work, a renewal thread's, and counts in
// failpoint.PhaseBackground, one count per client. Connection setup (HELLO, AUTH,
// CLIENT …, SELECT, READONLY) and PING, which client libraries send as a
// health check and go-redis never sends on its own, count in no phase.
func (r *Relay) Command(node int, args []string, send func() (reply any, err error)) error {
	setup := len(args) == 0 || rediscmd.SetupCommand(args[0]) || strings.EqualFold(args[0], "ping")
	return r.command(node, args, setup, send)
}

// command is Command; setup says the command counts in no phase.
func (r *Relay) command(node int, args []string, setup bool, send func() (reply any, err error)) error {
	c := r.c
	var reply any
	var replyErr error
	// A process that is paused cannot send, and its pause is real: no wait
	// for it here, unlike around.
	x := &exchange{h: c.history}
	sendOnce := func() error {
		if c.crashed.Load() {
			return ErrNotSent
		}
		x.wrap(func() error {
			reply, replyErr = send()
			return replyErr
		})()
		if c.crashed.Load() {
			return ErrCrashed
		}
		return replyErr
	}
	if setup || len(args) == 0 || r.warming.Load() {
		return sendOnce()
	}
	cmd := sentCommand{args: args, reply: func() (any, error) { return reply, replyErr }}
	pr, name := r.phase(), strings.ToUpper(args[0])
	err := c.strike(c.ctx, pr, node, name, []sentCommand{cmd}, x, sendOnce)
	if node < 0 {
		// A statement or request, on no lock node: recorded as a Go
		// lock's are (Client.statement).
		if n, ok := reply.(RowsChanged); ok {
			x.rows = (*int64)(&n)
		}
		c.recordRequest(pr, name, x, replyErr)
	}
	return err
}

// phase is the phase run a relayed command counts in.
func (r *Relay) phase() *phaseRun {
	if pr := r.c.phase.Load(); pr != nil && (pr.phase == failpoint.PhaseAcquire || pr.phase == failpoint.PhaseRelease) {
		return pr
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.background == nil {
		r.background = &phaseRun{phase: failpoint.PhaseBackground}
	}
	return r.background
}
