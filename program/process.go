package program

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local/proc"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/program/relay"
)

// firstAnswer is how long a program may take to start and answer its first
// request, beyond any request's bound, before it counts as one that never
// answers, unless EnvStart says otherwise. An interpreter that imports a
// client library took 0.3 s here idle, and 2.1 s beside eight others while
// two busy loops kept both cores busy; explore starts four per run, eight
// runs at once.
const firstAnswer = 12 * time.Second

// startWindow is firstAnswer, or the window EnvStart sets in locklab's own
// environment; it fails, in one line, on a value that is not a positive
// count of milliseconds.
func startWindow() (time.Duration, error) {
	v, ok := os.LookupEnv(EnvStart)
	if !ok || v == "" {
		return firstAnswer, nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive number of milliseconds", EnvStart, v)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// errDead is returned by every request to a process that ended or broke.
var errDead = errors.New("the lock program is not running")

// process is one running lock program: the process of one client. It
// implements harness.Process.
type process struct {
	command string
	client  atomic.Pointer[harness.Client] // the client of the run under way
	start   time.Duration                  // how much longer than bound the first answer may take
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	dir     *cluster.RunDir // holds the clock file
	clock   string          // libfaketime's timestamp file; "" without libfaketime
	relay   *relay.Relay    // between the program and its service in this run; nil when unrelayed
	// front is the relay's listeners, which the program dials, kept with
	// it between runs; nil when unrelayed or on replicated, whose
	// program is never kept (keep.go).
	front *relay.Front
	env   []string // what environment gave it: a kept program serves a run that gives the same
	// sentinels are the relayed Sentinels' addresses, which name relay's
	// listeners (replicated), and stopSentinels stops them; nil elsewhere.
	sentinels     []string
	stopSentinels io.Closer
	stderr        tail

	mu      sync.Mutex
	pending []*request // requests written, oldest first, waiting for their answer
	answers int        // lines answered so far
	dead    error      // set once the process ended or broke: requests fail with it

	killed   atomic.Bool   // it was killed on purpose (crash, close, broken), or is kept between runs
	stops    atomic.Int32  // SIGSTOPs not yet undone by a SIGCONT, in this run
	unclean  atomic.Bool   // its clock was moved, or a signal failed, in this run: never kept
	exited   chan struct{} // closed when the process has ended and been reaped
	readDone chan struct{} // closed when stdout and stderr are drained
}

// request is one line sent, and where its answer goes.
type request struct {
	answer chan string // buffered: the reader never blocks on an abandoned request
}

// start runs command for client c, with c's endpoints in its environment.
func start(c *harness.Client, command string) (*process, error) {
	window, err := startWindow()
	if err != nil {
		return nil, err
	}
	p := &process{command: command, start: window, exited: make(chan struct{}), readDone: make(chan struct{})}
	p.client.Store(c)
	dir, err := cluster.NewRunDir()
	if err != nil {
		return nil, err
	}
	p.dir = dir
	cleanup := func() {
		if p.stopSentinels != nil {
			p.stopSentinels.Close()
		}
		if p.relay != nil {
			p.relay.Close()
		}
		if p.front != nil {
			p.front.Close()
		}
		dir.Remove()
	}
	// The relay reads Redis's protocol, the SQL servers', memcached's,
	// ZooKeeper's and etcd's; elsewhere the program dials the client's
	// links itself, and Unrelayed says why.
	if e := c.Endpoints(); e.Unrelayed() == "" {
		if err := p.listen(e); err != nil {
			cleanup()
			return nil, err
		}
	}
	p.env = environment(c, p.relay, p.sentinels)
	env := append(os.Environ(), p.env...)
	if lib := proc.Libfaketime(); lib != "" {
		sweepShm()
		p.clock = filepath.Join(dir.Path(), "clock")
		if err := p.SetClock(0); err != nil {
			cleanup()
			return nil, err
		}
		env = append(env, preload(lib, p.clock)...)
	}
	p.cmd = exec.Command("/bin/sh", "-c", command)
	p.cmd.Env = env
	p.cmd.SysProcAttr = sysProcAttr()
	// Pipes of our own, not the ones os/exec copies in goroutines: Wait
	// must return when the program exits, even if something it started
	// still holds its output open.
	outR, outW, err := os.Pipe()
	if err != nil {
		cleanup()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		cleanup()
		return nil, err
	}
	p.cmd.Stdout, p.cmd.Stderr = outW, errW
	if p.stdin, err = p.cmd.StdinPipe(); err == nil {
		err = p.cmd.Start()
	}
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		cleanup()
		return nil, fmt.Errorf("start %q: %w", command, err)
	}
	var drained sync.WaitGroup
	drained.Add(2)
	go func() { defer drained.Done(); p.read(outR) }()
	go func() { defer drained.Done(); io.Copy(&p.stderr, errR) }()
	go func() {
		drained.Wait()
		outR.Close()
		errR.Close()
		close(p.readDone)
	}()
	go p.wait()
	return p, nil
}

// listen starts the program's relay to endpoints e and, on replicated,
// the relayed Sentinels that name it.
func (p *process) listen(e harness.Endpoints) error {
	upstream, proto, err := relayed(e)
	if err != nil {
		return err
	}
	if e.SentinelRelay != nil {
		if p.relay, err = relay.Listen(p.client.Load(), upstream, proto); err != nil {
			return err
		}
		p.sentinels, p.stopSentinels, err = e.SentinelRelay.RelaySentinels(p.relay.Addrs())
		return err
	}
	if p.front, err = relay.NewFront(len(upstream)); err != nil {
		return err
	}
	p.relay, err = relay.Attach(p.front, p.client.Load(), upstream, proto)
	return err
}

// relayed is where a relay for endpoints e forwards, and what it reads.
func relayed(e harness.Endpoints) ([]string, relay.Protocol, error) {
	if len(e.Sentinels) > 0 {
		return e.Links, relay.RedisReplicas, nil
	}
	if len(e.Env) > 0 {
		for _, kv := range e.Env {
			name, addrs, _ := strings.Cut(kv, "=")
			if proto, ok := seamProtocol(name); ok {
				return strings.Split(addrs, ","), proto, nil
			}
		}
		return nil, 0, fmt.Errorf("no relay reads the protocol of the service whose environment is %q", e.Env)
	}
	for _, db := range []struct {
		url   string
		proto relay.Protocol
	}{{e.Postgres, relay.Postgres}, {e.MySQL, relay.MySQL}} {
		if db.url == "" {
			continue
		}
		u, err := url.Parse(db.url)
		if err != nil {
			return nil, 0, fmt.Errorf("the server's URL: %w", err)
		}
		return []string{u.Host}, db.proto, nil
	}
	if len(e.Nodes) > 0 {
		return e.Nodes, relay.Redis, nil
	}
	return []string{e.Redis}, relay.Redis, nil
}

// seamProtocol is the protocol a relay reads at the addresses that
// variable name of a seam service's environment (harness.Dialer.Env)
// gives, and false when no relay reads that service's protocol, or name
// gives none. harness.Endpoints.Unrelayed says the same of the service.
func seamProtocol(name string) (relay.Protocol, bool) {
	switch name {
	case EnvMemcached:
		return relay.Memcached, true
	case EnvZooKeeper:
		return relay.ZooKeeper, true
	case EnvEtcd:
		return relay.Etcd, true
	}
	return 0, false
}

// environment is what a lock program learns of its client: the addresses
// of its relay r, and on replicated of its relayed Sentinels, which name
// r; the client's own without them.
func environment(c *harness.Client, r *relay.Relay, sentinels []string) []string {
	e := c.Endpoints()
	if sentinels != nil {
		e.Sentinels = sentinels
	}
	if r != nil {
		addrs := r.Addrs()
		switch {
		case r.Protocol() == relay.RedisReplicas:
			// The relayed Sentinels name the relay's addresses.
		case len(e.Env) > 0:
			e.Env = withRelay(e.Env, r.Protocol(), addrs)
		case r.Protocol() == relay.Postgres:
			e.Postgres = withHost(e.Postgres, addrs[0])
		case r.Protocol() == relay.MySQL:
			e.MySQL = withHost(e.MySQL, addrs[0])
		case len(e.Nodes) > 0:
			e.Nodes = addrs
		default:
			e.Redis = addrs[0]
		}
	}
	env := []string{
		EnvTTL + "=" + strconv.FormatInt(c.TTL().Milliseconds(), 10),
		EnvTimeout + "=" + strconv.FormatInt(c.Timeout().Milliseconds(), 10),
		EnvClient + "=" + strconv.Itoa(c.ID()),
	}
	switch {
	case e.MySQL != "":
		env = append(env, EnvMySQL+"="+e.MySQL)
	case len(e.Sentinels) > 0:
		env = append(env, EnvSentinels+"="+strings.Join(e.Sentinels, ","), EnvMaster+"="+e.Master)
	case len(e.Nodes) > 0:
		env = append(env, EnvNodes+"="+strings.Join(e.Nodes, ","))
	case e.Postgres != "":
		env = append(env, EnvPostgres+"="+e.Postgres)
	case len(e.Env) > 0:
		// A service started through the seam says what its programs get
		// (etcd: EnvEtcd and EnvSession; ZooKeeper: EnvZooKeeper and
		// EnvSession).
		env = append(env, e.Env...)
	default:
		env = append(env, EnvRedis+"="+e.Redis)
	}
	return env
}

// withRelay is the environment env of a seam service with the variable
// whose addresses a relay of proto reads naming addrs, the relay's, in
// their place. env is the client's own: it is copied, not changed.
func withRelay(env []string, proto relay.Protocol, addrs []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if p, ok := seamProtocol(name); ok && p == proto {
			kv = name + "=" + strings.Join(addrs, ",")
		}
		out[i] = kv
	}
	return out
}

// withHost is the URL raw with host:port host, which relayed could parse.
func withHost(raw, host string) string {
	u, _ := url.Parse(raw)
	u.Host = host
	return u.String()
}

// read matches each line the program prints to the oldest request waiting.
func (p *process) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 4096), 64*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		p.mu.Lock()
		if len(p.pending) == 0 {
			p.mu.Unlock()
			p.fail(fmt.Sprintf("printed %q when no request was waiting: stdout is for answers only (log to stderr)", clip(line)))
			continue
		}
		req := p.pending[0]
		p.pending = p.pending[1:]
		p.answers++
		p.mu.Unlock()
		req.answer <- line
	}
	if err := sc.Err(); err != nil {
		p.fail(fmt.Sprintf("printed a line locklab cannot read: %v", err))
		io.Copy(io.Discard, stdout)
	}
}

// wait reaps the program and ends what it left running in its group.
func (p *process) wait() {
	err := p.cmd.Wait()
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	awaitGroup(p.cmd.Process.Pid, 2*time.Second)
	// Give stderr a moment to deliver the program's last words.
	select {
	case <-p.readDone:
	case <-time.After(time.Second):
	}
	if !p.killed.Load() {
		status := "exit status 0"
		if err != nil {
			status = err.Error()
		}
		why := fmt.Sprintf("exited (%s) after %d answer(s)", status, p.answered())
		if last := p.stderr.last(); last != "" {
			why += ": " + last
		}
		p.fail(why)
	}
	p.mu.Lock()
	if p.dead == nil {
		p.dead = errDead
	}
	p.mu.Unlock()
	close(p.exited)
}

// awaitGroup waits, at most bound, until process group pid has ended: the
// processes the shell started (the interpreter) are not its children to
// reap, but init's once the shell is gone, so their end can only be
// polled. Without it a pool that closes could return while a killed
// interpreter is still tearing down its threads. A member that is a
// zombie has ended: waiting until init reaps it (every second or two on
// some machines) would only make the end of every run, and of an
// exploration, wait for init.
func awaitGroup(pid int, bound time.Duration) {
	deadline := time.Now().Add(bound)
	members, listed := groupMembers(pid)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if listed && !slices.ContainsFunc(members, running) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (p *process) answered() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answers
}

// fail spoils the run with one line saying what the program did wrong, and
// kills it: once out of step with the protocol, none of its answers can be
// trusted.
func (p *process) fail(why string) {
	p.mu.Lock()
	first := p.dead == nil
	if first {
		p.dead = fmt.Errorf("%w: it %s", errDead, why)
	}
	p.mu.Unlock()
	if first {
		c := p.client.Load()
		c.Spoil(fmt.Sprintf("lock program %q (client %d) %s", p.command, c.ID(), why))
	}
	p.killed.Store(true)
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// ask sends one request line and waits for its answer. No answer within
// the bound is an unknown outcome; the answer, if it ever comes, is
// matched to this request and dropped.
func (p *process) ask(ctx context.Context, line string) (string, error) {
	req := &request{answer: make(chan string, 1)}
	p.mu.Lock()
	if p.dead != nil {
		err := p.dead
		p.mu.Unlock()
		return "", err
	}
	first := p.answers == 0 && len(p.pending) == 0
	p.pending = append(p.pending, req)
	// Written under the lock, so that the queue's order is the pipe's.
	_, werr := io.WriteString(p.stdin, line+"\n")
	p.mu.Unlock()
	if werr != nil {
		// The program is gone; wait tells why.
		<-p.exited
		return "", p.deadErr()
	}
	bound := p.bound()
	if first {
		bound += p.start
	}
	sent := time.Now()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case a := <-req.answer:
		return a, nil
	case <-p.exited:
		select {
		case a := <-req.answer:
			return a, nil
		default:
			return "", p.deadErr()
		}
	case <-ctx.Done():
		// A program that has answered nothing by the end of the run never
		// will: say so, rather than leave its silence to read as a stuck lock.
		if waited := time.Since(sent); first && waited >= time.Second && p.answered() == 0 && !p.killed.Load() {
			p.fail(fmt.Sprintf("never answered its first request %q (waited %s, until the run ended)", line, waited.Round(time.Millisecond)))
		}
		return "", ctx.Err()
	case <-t.C:
		if p.answered() == 0 {
			p.fail(fmt.Sprintf("never answered its first request %q (waited %s)", line, bound.Round(time.Millisecond)))
		}
		return "", fmt.Errorf("lock program: no answer to %q within %s: outcome unknown", line, bound.Round(time.Millisecond))
	}
}

// bound is how long a request may wait for its answer: long enough for
// the program's own Redis timeout to expire twice (a dial and a read).
func (p *process) bound() time.Duration { return 2*p.client.Load().Timeout() + time.Second }

func (p *process) deadErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead == nil {
		return errDead
	}
	return p.dead
}

// Kill ends the program's whole process group at once, and with it its
// connections, which its relay drops.
func (p *process) Kill() error {
	p.killed.Store(true)
	err := signal(p.cmd.Process.Pid, syscall.SIGKILL)
	if p.relay != nil {
		p.relay.Drop()
	}
	return err
}

// Relayed reports whether the program's commands pass through its relay,
// where faults at the lock's own commands strike them.
func (p *process) Relayed() bool { return p.relay != nil }

// Pid is the id of the shell that runs the program's command.
func (p *process) Pid() int { return p.cmd.Process.Pid }

// Stop freezes the program's whole process group.
func (p *process) Stop() error {
	p.stops.Add(1)
	return p.unlessFailed(signal(p.cmd.Process.Pid, syscall.SIGSTOP))
}

// Continue undoes Stop.
func (p *process) Continue() error {
	err := p.unlessFailed(signal(p.cmd.Process.Pid, syscall.SIGCONT))
	if err == nil && p.stops.Add(-1) < 0 {
		p.stops.Store(0) // a SIGCONT with no SIGSTOP before it
	}
	return err
}

// unlessFailed marks p as never to be kept when err, a signal's, says the
// signal failed: its state is then not known. It returns err.
func (p *process) unlessFailed(err error) error {
	if err != nil {
		p.unclean.Store(true)
	}
	return err
}

// signal sends sig to the process group of pid; a group already gone has
// nothing left to signal.
func signal(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s to process group %d: %w", sig, pid, err)
	}
	return nil
}

// SetClock moves the program's wall clock: libfaketime re-reads the file
// at every clock reading (FAKETIME_NO_CACHE).
func (p *process) SetClock(offset time.Duration) error {
	if p.clock == "" {
		return errors.New("libfaketime is not installed (Debian: apt-get install faketime), so a program's clock cannot be skewed")
	}
	if offset != 0 {
		p.unclean.Store(true)
	}
	tmp := p.clock + ".new"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%+.6f\n", offset.Seconds())), 0o644); err != nil {
		return err
	}
	// A rename, so that libfaketime never reads a half-written file.
	return os.Rename(tmp, p.clock)
}

// Close ends the client's run for the program: it keeps the program for
// the same client of the deployment's next run when it can (park), and
// else ends it.
func (p *process) Close() error {
	if p.park() {
		return nil
	}
	return p.end()
}

// end kills the program if it still runs, waits until it is reaped, and
// removes what it left behind, its relay's listeners too.
func (p *process) end() error {
	p.killed.Store(true)
	p.stdin.Close()
	err := p.Kill()
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		err = errors.Join(err, fmt.Errorf("lock program %q (pid %d) did not end within 10 s of SIGKILL", p.command, p.cmd.Process.Pid))
	}
	proc.ForgetFaketime(p.cmd.Process.Pid)
	if p.stopSentinels != nil {
		err = errors.Join(err, p.stopSentinels.Close())
	}
	if p.relay != nil {
		p.relay.Close()
	}
	if p.front != nil {
		p.front.Close()
	}
	return errors.Join(err, p.dir.Remove())
}

// sweepShm removes the shared memory of libfaketime processes that are gone
// (killed along with a locklab process that was itself killed); libfaketime
// says a stale one breaks the next process that gets its pid.
var sweepShm = sync.OnceFunc(func() {
	files, _ := filepath.Glob("/dev/shm/faketime_shm_*")
	for _, f := range files {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(f), "faketime_shm_"))
		if err != nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			proc.ForgetFaketime(pid)
		}
	}
})

// tail keeps the last bytes a program wrote to stderr, for the line that
// says why it died.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 2048

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailSize {
		t.buf = t.buf[len(t.buf)-tailSize:]
	}
	return len(b), nil
}

// last is the last non-empty line written.
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return clip(strings.TrimSpace(lines[len(lines)-1]))
}

// clip shortens what a program printed to fit in one line of a report.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
