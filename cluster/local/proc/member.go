package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/locklab/locklab/network"
)

// Member is the lifecycle that every local server of a set shares: one run
// of its program at a time, killed, paused, resumed, restarted, and at
// last stopped, which gives its ports back and removes its directory. A
// server embeds it and keeps what is its own: its command line, when it is
// ready, what a restart without data removes. Its methods may be called
// from several goroutines.
type Member struct {
	kind  string // what errors call it: "etcd member", "node"
	name  string
	dir   string
	log   string
	ports []int

	// mu serializes the lifecycle (spawn, kill, signal, stop); proc is also
	// read without it, so that Running does not wait for a restart in
	// progress.
	mu      sync.Mutex
	proc    atomic.Pointer[Process]
	stopped bool
}

// NewMember is the member called name, which errors call a kind followed
// by its name ("kill etcd member e1: ..."), with its files in dir and its
// program's output in the file called log there.
func NewMember(kind, name, dir, log string) *Member {
	return &Member{kind: kind, name: name, dir: dir, log: log}
}

// Name is the member's name ("e1").
func (m *Member) Name() string { return m.name }

// Dir is the member's directory, which Stop removes.
func (m *Member) Dir() string { return m.dir }

// LogPath is the file that the member's program writes to, every run after
// the one before.
func (m *Member) LogPath() string { return filepath.Join(m.dir, m.log) }

// Process is the member's latest run, nil before the first.
func (m *Member) Process() *Process { return m.proc.Load() }

// Pid is the id of the member's latest run while it has not exited
// (cluster.ServerProcess), or 0.
func (m *Member) Pid() int { return m.Process().RunningPid() }

// HoldPort makes port, which network.StablePort handed out, the member's:
// Stop gives it back. Called before the member is shared.
func (m *Member) HoldPort(port int) { m.ports = append(m.ports, port) }

// How often, and how far apart, Spawn tries again to exec a program that
// is "text file busy".
const (
	busyTries = 50
	busyWait  = 10 * time.Millisecond
)

// Spawn starts program with args in the member's directory, its output
// appended to the log, as the member's run; env, when not nil, replaces
// the environment. It does not wait for the program to serve. It returns
// the log's size before the start, where this run's lines begin. Called
// with the lifecycle held (in Restart's start) or before the member is
// shared.
func (m *Member) Spawn(env []string, program string, args ...string) (logStart int64, err error) {
	// One log for all runs; stderr catches what a server prints before its
	// logging is set up.
	logFile, err := os.OpenFile(m.LogPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("start %s %s: %w", m.kind, m.name, err)
	}
	defer logFile.Close() // the child has its own copy
	info, err := logFile.Stat()
	if err != nil {
		return 0, fmt.Errorf("start %s %s: %w", m.kind, m.name, err)
	}
	var cmd *exec.Cmd
	for try := 1; ; try++ {
		// Not exec.CommandContext: the run must outlive the start's ctx.
		cmd = exec.Command(program, args...)
		cmd.Dir = m.dir
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = logFile, logFile
		Prepare(cmd)
		err = cmd.Start()
		// A script just written (a Sentinel's) is "text file busy" to exec
		// while a fork elsewhere in this process still holds its write
		// descriptor, as when runs or nodes start at once; that fork execs
		// or exits within milliseconds (golang/go#22315).
		if !errors.Is(err, syscall.ETXTBSY) || try == busyTries {
			break
		}
		time.Sleep(busyWait)
	}
	if err != nil {
		return 0, fmt.Errorf("start %s %s: %w", m.kind, m.name, err)
	}
	m.proc.Store(Watch(cmd))
	return info.Size(), nil
}

// Running reports whether the member's program is alive; a paused one is.
func (m *Member) Running() bool {
	p := m.proc.Load()
	return p != nil && !p.Exited()
}

// Kill sends SIGKILL and waits for the program to exit: a real crash, with
// no shutdown. Killing a member that does not run does nothing.
func (m *Member) Kill() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kill()
}

// kill is Kill with m.mu held.
func (m *Member) kill() error {
	if err := m.proc.Load().Kill(); err != nil {
		return fmt.Errorf("kill %s %s: %w", m.kind, m.name, err)
	}
	return nil
}

// Restart kills the member's run, if it has one, and calls start, with the
// lifecycle held throughout, so that no Kill, Pause or Stop comes between.
// A stopped member is an error.
func (m *Member) Restart(start func() error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return fmt.Errorf("restart %s %s: stopped", m.kind, m.name)
	}
	if err := m.kill(); err != nil {
		return err
	}
	return start()
}

// Pause stops the member's program with SIGSTOP: it keeps its connections
// but answers nothing until Resume.
func (m *Member) Pause() error { return m.signal("pause", syscall.SIGSTOP) }

// Resume continues a paused member with SIGCONT.
func (m *Member) Resume() error { return m.signal("resume", syscall.SIGCONT) }

func (m *Member) signal(verb string, sig syscall.Signal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.proc.Load().Signal(sig); err != nil {
		return fmt.Errorf("%s %s %s: %w", verb, m.kind, m.name, err)
	}
	return nil
}

// Stop kills the member, gives its ports back and removes its directory.
// It may be called more than once, after Kill, and on a paused member.
func (m *Member) Stop() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil
	}
	if err := m.kill(); err != nil {
		return err
	}
	m.stopped = true
	for _, port := range m.ports {
		network.ReleasePort(port)
	}
	if m.dir != "" {
		if err := os.RemoveAll(m.dir); err != nil {
			return fmt.Errorf("stop %s %s: %w", m.kind, m.name, err)
		}
	}
	return nil
}
