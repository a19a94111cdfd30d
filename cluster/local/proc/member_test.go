//go:build linux

package proc

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/network"
)

// patience bounds every wait: generous, because another job may load the
// machine, but short enough that a hang fails the test rather than the run.
const patience = 5 * time.Second

// newMember is a member called n1 with its own fresh directory, stopped when
// the test ends, so that no process it starts outlives the test, failed or not.
func newMember(t *testing.T) *Member {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "n1")
	// A server makes its own directory; Spawn expects it.
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := NewMember("node", "n1", dir, "n1.log")
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return m
}

// spawnShell runs script under /bin/sh as the member's run.
func spawnShell(t *testing.T, m *Member, script string) (logStart int64) {
	t.Helper()
	logStart, err := m.Spawn(nil, "/bin/sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	return logStart
}

// waitFor polls cond until it holds, failing the test after patience.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, patience)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readLog is the member's log, "" while it does not exist.
func readLog(t *testing.T, m *Member) string {
	t.Helper()
	data, err := os.ReadFile(m.LogPath())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(data)
}

// waitLog waits until the member's log is exactly want: a shell's echo lands
// some time after Spawn returns.
func waitLog(t *testing.T, m *Member, want string) {
	t.Helper()
	waitFor(t, "log "+strconv.Quote(want), func() bool { return readLog(t, m) == want })
}

// stat is the state letter and process group of pid from /proc/<pid>/stat;
// ok is false once pid is gone.
func stat(pid int) (state string, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
	i := bytes.LastIndex(data, []byte(") "))
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(string(data[i+2:]))
	if len(f) < 3 {
		return "", 0, false
	}
	pgrp, err = strconv.Atoi(f[2])
	return f[0], pgrp, err == nil
}

// state is pid's state letter, "" once it is gone.
func state(pid int) string {
	s, _, _ := stat(pid)
	return s
}

// groupChildren are the live (not zombie) processes of group pgid other than
// its leader.
func groupChildren(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		if s, pgrp, ok := stat(pid); ok && pgrp == pgid && s != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// spawnForking runs a shell that forks a child sleep into its process group
// and waits for it, and returns the child once it runs. If the test fails
// before the group is killed, the cleanup kills the child too.
func spawnForking(t *testing.T, m *Member) (leader, child int) {
	t.Helper()
	spawnShell(t, m, "sleep 60 & wait")
	leader = m.Process().Pid
	t.Cleanup(func() {
		if GroupRunning(leader) {
			_ = syscall.Kill(-leader, syscall.SIGKILL)
		}
	})
	var children []int
	waitFor(t, "forked child", func() bool {
		children = groupChildren(t, leader)
		return len(children) > 0
	})
	if len(children) != 1 {
		t.Fatalf("group %d has children %v, want one sleep", leader, children)
	}
	return leader, children[0]
}

// TestSpawn shows that a run starts in the member's directory with the given
// environment, its output in LogPath, and that the member then runs.
func TestSpawn(t *testing.T) {
	m := newMember(t)
	if m.Running() || m.Process() != nil {
		t.Fatalf("before Spawn: Running %v, Process %v; want false, nil", m.Running(), m.Process())
	}
	logStart, err := m.Spawn([]string{"V=x"}, "/bin/sh", "-c", `echo "v=$V"; pwd -P; exec sleep 60`)
	if err != nil {
		t.Fatal(err)
	}
	if logStart != 0 {
		t.Errorf("logStart = %d, want 0 for a new log", logStart)
	}
	p := m.Process()
	if p == nil || p.Pid <= 0 {
		t.Fatalf("Process() = %v after Spawn", p)
	}
	if !m.Running() {
		t.Error("Running() = false after Spawn")
	}
	dir, err := filepath.EvalSymlinks(m.Dir())
	if err != nil {
		t.Fatal(err)
	}
	waitLog(t, m, "v=x\n"+dir+"\n")
	if got := m.LogPath(); got != filepath.Join(m.Dir(), "n1.log") {
		t.Errorf("LogPath() = %q, want n1.log in %q", got, m.Dir())
	}
	// The run leads a process group of its own, which Signal and Kill rely on.
	if _, pgrp, ok := stat(p.Pid); !ok || pgrp != p.Pid {
		t.Errorf("process group of %d = %d (found %v), want its own", p.Pid, pgrp, ok)
	}
}

// TestSpawnError shows that a program that cannot start is an error naming
// the member, and leaves the member without a run.
func TestSpawnError(t *testing.T) {
	m := newMember(t)
	_, err := m.Spawn(nil, filepath.Join(m.Dir(), "no-such-program"))
	if err == nil || !strings.HasPrefix(err.Error(), "start node n1: ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Spawn of a missing program: %v; want start node n1: ... not exist", err)
	}
	if m.Running() || m.Process() != nil {
		t.Errorf("after a failed Spawn: Running %v, Process %v; want false, nil", m.Running(), m.Process())
	}
}

// TestPauseResume shows that Pause stops the whole process group, forked
// child included, and that a paused member still counts as running; Resume
// lets both run again.
func TestPauseResume(t *testing.T) {
	m := newMember(t)
	leader, child := spawnForking(t, m)

	if err := m.Pause(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{leader, child} {
		waitFor(t, "stopped state T of "+strconv.Itoa(pid), func() bool { return state(pid) == "T" })
	}
	if !m.Running() {
		t.Error("Running() = false for a paused member")
	}

	if err := m.Resume(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{leader, child} {
		waitFor(t, "running state of "+strconv.Itoa(pid), func() bool {
			s := state(pid)
			return s != "T" && s != ""
		})
	}
}

// TestKill shows that Kill is a SIGKILL that returns once the run is reaped,
// that the member then no longer runs, and that a second Kill does nothing.
func TestKill(t *testing.T) {
	m := newMember(t)
	spawnShell(t, m, "exec sleep 60")
	p := m.Process()

	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Kill returned before the process was reaped")
	}
	if m.Running() {
		t.Error("Running() = true after Kill")
	}
	var exit *exec.ExitError
	if !errors.As(p.Err(), &exit) {
		t.Fatalf("Err() = %v, want an exit by signal", p.Err())
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("Err() = %v, want killed by SIGKILL", p.Err())
	}
	if m.Process() != p {
		t.Error("Process() changed on Kill; want the latest run kept")
	}
	if err := m.Kill(); err != nil {
		t.Errorf("second Kill: %v, want nil", err)
	}
}

// TestKillGroup shows that Kill reaches the child the run forked: once the
// killed group has died, GroupRunning finds none of it.
func TestKillGroup(t *testing.T) {
	m := newMember(t)
	leader, child := spawnForking(t, m)
	if !GroupRunning(leader) {
		t.Fatalf("GroupRunning(%d) = false with child %d running", leader, child)
	}

	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	// Kill waits for the leader only; the child dies on its own schedule.
	WaitGroupGone(leader)
	if GroupRunning(leader) {
		t.Errorf("group %d still runs %v after Kill", leader, groupChildren(t, leader))
	}
}

// TestStopKillsOrphans: a server that exits by itself while a child it
// forked still runs (a crash during a background save) leaves that child
// in its group; Stop kills it.
func TestStopKillsOrphans(t *testing.T) {
	m := newMember(t)
	spawnShell(t, m, "sleep 60 & echo forked")
	leader := m.Process().Pid
	t.Cleanup(func() {
		if GroupRunning(leader) {
			_ = syscall.Kill(-leader, syscall.SIGKILL)
		}
	})
	<-m.Process().Done()
	if members, hasLeader := groupMembers(leader); members != 1 || hasLeader {
		t.Fatalf("after the shell's exit: group %d has %d members (leader among them: %v), want its one sleep", leader, members, hasLeader)
	}

	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if GroupRunning(leader) {
		t.Errorf("group %d still runs %v after Stop", leader, groupChildren(t, leader))
	}
}

// TestRestart shows that Restart kills the current run, calls start with the
// member's lifecycle held, and that the new run appends to the same log, so
// that the log holds every run in order and the offset Spawn returned finds
// the new run's lines.
func TestRestart(t *testing.T) {
	m := newMember(t)
	spawnShell(t, m, "echo run1; exec sleep 60")
	waitLog(t, m, "run1\n")
	first := m.Process()

	var logStart int64
	err := m.Restart(func() error {
		// Restart holds the lifecycle, so the old run must already be reaped.
		if !first.Exited() {
			t.Error("start called before the old run was reaped")
		}
		logStart = spawnShell(t, m, "echo run2; exec sleep 60")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	second := m.Process()
	if second == first || !m.Running() {
		t.Fatalf("after Restart: Process %v (was %v), Running %v; want a new running process", second, first, m.Running())
	}
	if logStart != int64(len("run1\n")) {
		t.Errorf("logStart = %d, want %d, the first run's log size", logStart, len("run1\n"))
	}
	waitLog(t, m, "run1\nrun2\n")
	if got := LogTail(m.LogPath(), logStart, 10); got != "run2" {
		t.Errorf("LogTail from logStart = %q, want the new run's %q", got, "run2")
	}
}

// TestRestartAfterKill shows that a killed member comes back with Restart,
// and that start's error is Restart's.
func TestRestartAfterKill(t *testing.T) {
	m := newMember(t)
	spawnShell(t, m, "echo run1; exec sleep 60")
	waitLog(t, m, "run1\n") // a kill before the echo would lose it
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(func() error { spawnShell(t, m, "echo run2; exec sleep 60"); return nil }); err != nil {
		t.Fatal(err)
	}
	if !m.Running() {
		t.Error("Running() = false after Restart")
	}
	waitLog(t, m, "run1\nrun2\n")

	errStart := errors.New("start failed")
	if err := m.Restart(func() error { return errStart }); !errors.Is(err, errStart) {
		t.Errorf("Restart with a failing start = %v, want %v", err, errStart)
	}
	if m.Running() {
		t.Error("Running() = true after a Restart whose start failed; want the old run killed")
	}
}

// TestStop shows that Stop ends the run, paused or not, removes the member's
// directory and may be called again.
func TestStop(t *testing.T) {
	for _, paused := range []bool{false, true} {
		t.Run("paused="+strconv.FormatBool(paused), func(t *testing.T) {
			m := newMember(t)
			spawnShell(t, m, "echo hello; exec sleep 60")
			p := m.Process()
			if paused {
				if err := m.Pause(); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "stopped state T", func() bool { return state(p.Pid) == "T" })
			}

			if err := m.Stop(); err != nil {
				t.Fatal(err)
			}
			if !p.Exited() || m.Running() {
				t.Errorf("after Stop: Exited %v, Running %v; want true, false", p.Exited(), m.Running())
			}
			if _, err := os.Stat(m.Dir()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("member directory after Stop: %v, want it removed", err)
			}
			if err := m.Stop(); err != nil {
				t.Errorf("second Stop: %v, want nil", err)
			}
		})
	}
}

// TestStopAfterKill shows that Stop of a member already killed, or that never
// ran, still removes its directory.
func TestStopAfterKill(t *testing.T) {
	for _, spawn := range []bool{true, false} {
		t.Run("spawned="+strconv.FormatBool(spawn), func(t *testing.T) {
			m := newMember(t)
			if spawn {
				spawnShell(t, m, "exec sleep 60")
				if err := m.Kill(); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.Stop(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(m.Dir()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("member directory after Stop: %v, want it removed", err)
			}
		})
	}
}

// TestStopReleasesPort shows that Stop gives back a port held with HoldPort:
// StablePort, which never hands out a port it holds, hands it out again.
func TestStopReleasesPort(t *testing.T) {
	port, err := network.StablePort()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { network.ReleasePort(port) })
	m := newMember(t)
	m.HoldPort(port)
	spawnShell(t, m, "exec sleep 60")

	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if !handedOutAgain(t, port) {
		// Another process on the machine may have bound it since.
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err != nil {
			t.Skipf("port %d was taken by another process: %v", port, err)
		} else {
			l.Close()
		}
		t.Errorf("StablePort never handed out port %d again after Stop", port)
	}
}

// handedOutAgain reports whether StablePort hands out want. StablePort picks
// at random among the ports it does not hold, so every port handed out is
// held until the end, which narrows the choice until want comes (about 6,000
// calls, each a bind of a loopback port). Once every free port is held,
// StablePort fails every call; after a run of failures that would have
// found want about 40 times over, it is taken.
func handedOutAgain(t *testing.T, want int) bool {
	var held []int
	defer func() {
		for _, p := range held {
			network.ReleasePort(p)
		}
	}()
	deadline := time.Now().Add(3 * patience)
	for failed := 0; failed < 5000 && time.Now().Before(deadline); {
		p, err := network.StablePort()
		if err != nil {
			failed++ // its 100 tries all hit held ports
			continue
		}
		failed = 0
		if p == want {
			return true // the caller's cleanup releases it
		}
		held = append(held, p)
	}
	return false
}

// TestErrors shows what each operation says of a member with no live run:
// before its first run, after a Kill and after Stop.
func TestErrors(t *testing.T) {
	m := newMember(t)
	for _, op := range []struct {
		name string
		do   func() error
	}{{"pause", m.Pause}, {"resume", m.Resume}} {
		if err := op.do(); !errors.Is(err, ErrNotRunning) || err.Error() != op.name+" node n1: not running" {
			t.Errorf("%s before Spawn: %v, want %q", op.name, err, op.name+" node n1: not running")
		}
	}
	if err := m.Kill(); err != nil {
		t.Errorf("Kill before Spawn: %v, want nil", err)
	}

	spawnShell(t, m, "exec sleep 60")
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := m.Pause(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Pause after Kill: %v, want %v", err, ErrNotRunning)
	}

	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	called := false
	err := m.Restart(func() error { called = true; return nil })
	if err == nil || err.Error() != "restart node n1: stopped" || called {
		t.Errorf("Restart after Stop: %v, start called %v; want %q and no start", err, called, "restart node n1: stopped")
	}
	if err := m.Resume(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Resume after Stop: %v, want %v", err, ErrNotRunning)
	}
	if err := m.Kill(); err != nil {
		t.Errorf("Kill after Stop: %v, want nil", err)
	}
}

// TestProcessNil shows that a nil Process, a member's before its first run,
// is one that does not run.
func TestProcessNil(t *testing.T) {
	var p *Process
	if err := p.Signal(syscall.SIGCONT); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Signal on nil: %v, want %v", err, ErrNotRunning)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("Kill on nil: %v, want nil", err)
	}
}

// TestLogTail shows that LogTail returns the last lines written from offset
// on, and says so when there are none or the log cannot be read.
func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	const text = "a\nb\nc\nd\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// A big log whose head LogTail skips: its tail lines are still right.
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x\n", 100<<10)+"last\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		path   string
		offset int64
		lines  int
		want   string
	}{
		{"last two", path, 0, 2, "c\nd"},
		{"fewer than asked", path, 0, 10, "a\nb\nc\nd"},
		{"from offset", path, int64(len("a\nb\n")), 10, "c\nd"},
		{"nothing after offset", path, int64(len(text)), 10, "(empty)"},
		{"big log", big, 0, 2, "x\nlast"},
	} {
		if got := LogTail(tc.path, tc.offset, tc.lines); got != tc.want {
			t.Errorf("%s: LogTail(%d, %d) = %q, want %q", tc.name, tc.offset, tc.lines, got, tc.want)
		}
	}
	if got := LogTail(filepath.Join(dir, "missing"), 0, 10); !strings.HasPrefix(got, "(cannot read log: ") {
		t.Errorf("LogTail of a missing file = %q, want (cannot read log: ...)", got)
	}
}

// TestFindProgram shows that FindProgram returns the absolute path of the
// first of the names that is an executable in dir, or on PATH when dir is "",
// and reports when none is.
func TestFindProgram(t *testing.T) {
	bin := t.TempDir()
	for name, mode := range map[string]os.FileMode{"prog": 0o755, "other": 0o755, "data": 0o644} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	// A relative dir: the programs run elsewhere, so the path must be absolute.
	t.Chdir(filepath.Dir(bin))
	rel := filepath.Base(bin)

	for _, tc := range []struct {
		dir   string
		names []string
		want  string // "" for not found
	}{
		{bin, []string{"prog"}, "prog"},
		{bin, []string{"missing", "other", "prog"}, "other"},
		{bin, []string{"data"}, ""}, // not executable
		{bin, []string{"missing"}, ""},
		{rel, []string{"prog"}, "prog"},
		{"", []string{"missing", "prog"}, "prog"},
		{"", []string{"missing"}, ""},
		{t.TempDir(), []string{"prog"}, ""}, // dir, not PATH, is searched
	} {
		got, ok := FindProgram(tc.dir, tc.names...)
		want, wantOK := filepath.Join(bin, tc.want), tc.want != ""
		if !wantOK {
			want = ""
		}
		if got != want || ok != wantOK {
			t.Errorf("FindProgram(%q, %q) = %q, %v; want %q, %v", tc.dir, tc.names, got, ok, want, wantOK)
		}
	}
}
