// Package program judges a lock written in any language: a program that
// speaks a line protocol on its stdin and stdout. locklab starts one process
// per client, with that client's own network links in its environment
// (LOCKLAB_REDIS on single; LOCKLAB_SENTINELS and LOCKLAB_MASTER on
// replicated; LOCKLAB_NODES on redlock; LOCKLAB_MYSQL on mariadb and
// LOCKLAB_POSTGRES on postgres, whose lock table is sqldb.LockTable;
// LOCKLAB_ETCD or LOCKLAB_ZOOKEEPER and LOCKLAB_SESSION_MS on etcd and
// zookeeper; on a service started through the seam, what its
// harness.Dialer's Env says, LOCKLAB_MEMCACHED on memcached; plus
// LOCKLAB_TTL_MS, LOCKLAB_TIMEOUT_MS and LOCKLAB_CLIENT), and asks:
//
//	acquire KEY   →  ok [TOKEN] | refused | error TEXT
//	release KEY   →  ok | not-held | error TEXT
//	reset         →  ok (anything else: the program is started anew)
//
// reset comes between two runs of one warm deployment, which keeps the
// process for the next run (keep.go): the program forgets what it holds,
// with no request to the service.
//
// one request at a time per process, one answer line per request, in
// order. TOKEN is a fencing token (a decimal number; none means 0). An
// `error` answer, or none within the bound, is an unknown outcome. stdout
// carries answers only; logs go to stderr.
//
// The addresses the program gets are those of its relay (package
// program/relay), which forwards each connection to the client's own link
// to the node and runs each command (each statement: MariaDB's COM_QUERY
// or COM_STMT_EXECUTE, PostgreSQL's simple query or extended-protocol
// batch; TLS is not read; each request of memcached's text protocol; each
// ZooKeeper request but the session's pings; each unary gRPC call to etcd,
// not its keep-alive and watch streams) through the failpoints armed on
// the lock's own commands (harness.Relay), as for a Go lock. On
// replicated, LOCKLAB_SENTINELS names the program's relayed Sentinels
// (harness.SentinelRelayer, package service/redis/sentinel), which name
// its relay to each data node in place of the node, after a failover too.
// Where no relay reads the program's requests (harness.Endpoints.Unrelayed
// says why), a scenario that strikes them is unknown for a program, and a
// fault explore drew there is reported missed, with that reason.
//
// The process is the client (harness.Process): its crash is a SIGKILL of
// its process group, its stop-the-world pause is SIGSTOP then SIGCONT, its
// threads included, and its clock skew is libfaketime's, in that process
// only (its monotonic clock keeps true time). A program that prints
// garbage, exits, never answers or cannot start spoils the run
// (harness.Client.Spoil): one line says what it did, and every verdict of
// the run is unknown.
package program

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/locklab/locklab/cluster/local/proc"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/program/relay"
)

// The environment a lock program gets.
const (
	EnvRedis     = "LOCKLAB_REDIS"      // host:port of the master (single)
	EnvSentinels = "LOCKLAB_SENTINELS"  // host:port of each Sentinel, comma-separated (replicated)
	EnvMaster    = "LOCKLAB_MASTER"     // the master's name at the Sentinels (replicated)
	EnvNodes     = "LOCKLAB_NODES"      // host:port of each master, comma-separated (redlock)
	EnvMySQL     = "LOCKLAB_MYSQL"      // mysql://USER[:PASSWORD]@HOST:PORT/locklab, the lock table's server (mariadb)
	EnvTTL       = "LOCKLAB_TTL_MS"     // the lease the scenario times its faults against
	EnvTimeout   = "LOCKLAB_TIMEOUT_MS" // give up on a Redis reply after this long: an unknown outcome
	EnvClient    = "LOCKLAB_CLIENT"     // the client's number, from 0

	EnvPostgres = "LOCKLAB_POSTGRES" // postgres:// URL of the lock table's server (postgres)
	EnvEtcd     = "LOCKLAB_ETCD"     // host:port of each etcd member, comma-separated (etcd)
	// EnvZooKeeper is host:port of each ZooKeeper server, comma-separated
	// (zookeeper).
	EnvZooKeeper = "LOCKLAB_ZOOKEEPER"
	// EnvMemcached is host:port of the memcached server (memcached): the
	// variable service/memcached's Env sets, which the relay reads.
	EnvMemcached = "LOCKLAB_MEMCACHED"
	// EnvSession is the lease or session timeout the service grants for
	// LOCKLAB_TTL_MS, in its own unit (etcd: whole seconds, one at least),
	// which the program asks for: the lease the Go locks of that service
	// hold, so that its faults are timed against the same lease. Set on
	// the services whose locks hold a session (etcd, ZooKeeper).
	EnvSession = "LOCKLAB_SESSION_MS"
)

// EnvStart, in locklab's own environment rather than the program's, is how
// long a program may take to start and answer its first request, in
// milliseconds, beyond any request's bound: for an interpreter that
// starts slowly on a loaded machine. Unset, it is 12 s.
const EnvStart = "LOCKLAB_START_MS"

// Prefix starts a lock name that is a program: exec:COMMAND.
const Prefix = "exec:"

// New is the lock run by command, a /bin/sh command line, one process per
// client.
func New(command string) harness.NewLocker {
	return func(c *harness.Client) harness.Locker {
		l := &Lock{}
		p, err := obtain(c, command)
		if err != nil {
			l.err = fmt.Errorf("lock program %q (client %d) could not start: %w", command, c.ID(), err)
			c.Spoil(l.err.Error())
			return l
		}
		l.p, l.r = p, p.relay
		c.Attach(p)
		return l
	}
}

// Check reports, in one line, why command cannot be run: EnvStart is not a
// number of milliseconds, the command is empty, or its program is not found
// or not executable. It looks at the first word only; a command line that
// starts with a shell keyword is left to the run.
func Check(command string) error {
	if _, err := startWindow(); err != nil {
		return err
	}
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return errors.New("exec: names no command (exec:'php lock.php')")
	}
	name := strings.Trim(fields[0], `'"`)
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("lock program %q: %s: not found or not executable", command, name)
	}
	return nil
}

// Lock is one client's lock program.
type Lock struct {
	p   *process     // nil when it could not start
	r   *relay.Relay // p's relay in this run; nil when unrelayed
	err error        // why it could not start
}

// Acquire asks the program for the lock on key.
func (l *Lock) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	if l.r != nil {
		l.r.Acquires().Begin()
	}
	answer, err := l.ask(ctx, "acquire", key)
	if l.r != nil {
		l.r.Acquires().End(err == nil && (answer == "ok" || strings.HasPrefix(answer, "ok ")))
	}
	if err != nil {
		return nil, err
	}
	word, rest, _ := strings.Cut(answer, " ")
	switch {
	case word == "ok":
		token := uint64(0)
		if rest != "" {
			if token, err = strconv.ParseUint(rest, 10, 64); err != nil {
				return nil, l.garbage(answer, "acquire "+key, "a token must be a decimal number")
			}
		}
		return &lease{l: l, key: key, token: token}, nil
	case answer == "refused":
		return nil, harness.ErrNotAcquired
	case word == "error":
		return nil, fmt.Errorf("lock program: %s", rest)
	}
	return nil, l.garbage(answer, "acquire "+key, "want ok [TOKEN], refused or error TEXT")
}

// Footprint is what the program's own requests showed of its lock, through
// its relay, in the acquires it answered ok (harness.Footprinter): the
// key it took, its lease, where its hold lives; and why any of it could
// not be told. A program no relay reads shows nothing.
func (l *Lock) Footprint() (footprint.Footprint, []string) {
	if l.r == nil {
		return footprint.Footprint{}, nil
	}
	return l.r.Acquires().Footprint()
}

// ask sends `verb key` to the program.
func (l *Lock) ask(ctx context.Context, verb, key string) (string, error) {
	if l.p == nil {
		return "", l.err
	}
	if key == "" || strings.ContainsAny(key, " \t\r\n") {
		return "", fmt.Errorf("lock program: key %q cannot be sent in one line", key)
	}
	return l.p.ask(ctx, verb+" "+key)
}

// warmKey is the key of the warm-up request: never the workload's.
const warmKey = "locklab-warm-up"

// Warm waits until the program answers a first request, a release of a key
// it never took, so that the run starts once its interpreter has loaded.
// Any answer in the protocol will do; the commands it sends meanwhile are
// struck by no fault (harness.Relay.Warmup).
func (l *Lock) Warm(ctx context.Context) error {
	if l.p == nil {
		return l.err
	}
	ask := func() error {
		answer, err := l.ask(ctx, "release", warmKey)
		if err != nil {
			return err
		}
		if word, _, _ := strings.Cut(answer, " "); answer != "ok" && answer != "not-held" && word != "error" {
			return l.garbage(answer, "release "+warmKey, "want ok, not-held or error TEXT")
		}
		return nil
	}
	if l.r != nil {
		return l.r.Warmup(ask)
	}
	return ask()
}

// garbage spoils the run for an answer outside the protocol.
func (l *Lock) garbage(answer, request, want string) error {
	l.p.fail(fmt.Sprintf("answered %q to %q: not in the protocol (%s)", clip(answer), request, want))
	return fmt.Errorf("lock program: answered %q: not in the protocol", clip(answer))
}

type lease struct {
	l     *Lock
	key   string
	token uint64
}

// Release asks the program to give the lock back.
func (s *lease) Release(ctx context.Context) error {
	answer, err := s.l.ask(ctx, "release", s.key)
	if err != nil {
		return err
	}
	word, rest, _ := strings.Cut(answer, " ")
	switch {
	case answer == "ok":
		return nil
	case answer == "not-held":
		return harness.ErrNotHeld
	case word == "error":
		return fmt.Errorf("lock program: %s", rest)
	}
	return s.l.garbage(answer, "release "+s.key, "want ok, not-held or error TEXT")
}

// Token is the fencing token the program gave, 0 for none.
func (s *lease) Token() uint64 { return s.token }

// HasLibfaketime reports whether a program's clock can be skewed here.
func HasLibfaketime() bool { return proc.Libfaketime() != "" }

// preload makes libfaketime take the wall clock from file, read again at
// every clock reading. The monotonic clock is left alone: a skewed wall
// clock (NTP, a VM resumed) never moves it. A caveat of libfaketime 0.9.10
// with that setting: a sleep until an absolute monotonic time (Python's
// time.sleep) fails with EINVAL; waits with a timeout (threading.Event.wait)
// work.
func preload(lib, file string) []string {
	ld := lib
	if prev := os.Getenv("LD_PRELOAD"); prev != "" {
		ld = lib + ":" + prev
	}
	return []string{"LD_PRELOAD=" + ld, "FAKETIME_TIMESTAMP_FILE=" + file, "FAKETIME_NO_CACHE=1",
		"FAKETIME_DONT_FAKE_MONOTONIC=1"}
}
