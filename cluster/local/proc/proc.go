// Package proc runs the local backend's servers as operating-system
// processes, each the leader of a process group of its own, so that a
// pause or a kill reaches whatever the server forked, and nothing it
// started outlives it.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNotRunning is a signal to a process that has ended, or never ran.
var ErrNotRunning = errors.New("not running")

// ErrPortTaken is a server that could not listen on its port, which
// another process took since it was found free; its start may try another.
var ErrPortTaken = errors.New("port already in use")

// PortTrials is how many free ports a start tries before it gives up.
const PortTrials = 3

// Process is one run of a server; a restart makes a new one.
type Process struct {
	// Pid is the process's id, and its process group's.
	Pid  int
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // cmd.Wait's result; read only after done is closed
}

// Prepare makes cmd start in a process group of its own, which the kernel
// kills if locklab dies (on Linux).
func Prepare(cmd *exec.Cmd) { cmd.SysProcAttr = sysProcAttr() }

// Watch is the process of cmd, which has started, reaped in the background.
func Watch(cmd *exec.Cmd) *Process {
	p := &Process{Pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process ended, once Done is closed.
func (p *Process) Err() error { return p.err }

// Exited reports whether the process has exited and been reaped.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// RunningPid is p's pid while it has not exited, or 0 (also for a nil p).
func (p *Process) RunningPid() int {
	if p == nil || p.Exited() {
		return 0
	}
	return p.Pid
}

// Signal sends sig to p's whole process group, so that a child the server
// forked (an AOF rewrite) is paused or killed with it.
func (p *Process) Signal(sig syscall.Signal) error {
	if p == nil || p.Exited() {
		return ErrNotRunning
	}
	return syscall.Kill(-p.Pid, sig)
}

// Kill kills p's process group and waits until p is reaped; a process
// that ended already is no error, but a child it forked and left running
// (a background save whose server crashed) is killed then.
func (p *Process) Kill() error {
	if p == nil {
		return nil
	}
	if p.Exited() {
		return p.killOrphans()
	}
	// ESRCH: it exited on its own since we looked.
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	<-p.done
	return nil
}

// killOrphans kills what is left of p's process group once p has exited.
// Linux gives the group's number to no new process while a member of the
// group lives; once none does, a process of that pid is a newcomer leading
// a group of its own, which is spared.
func (p *Process) killOrphans() error {
	if members, leader := groupMembers(p.Pid); members == 0 || leader {
		return nil
	}
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	WaitGroupGone(p.Pid)
	return nil
}

// How long, and how often, WaitGroupGone looks.
const (
	reapCap  = 5 * time.Second
	reapPoll = 5 * time.Millisecond
)

// Libfaketime is the path of libfaketime ($LOCKLAB_LIBFAKETIME, else where
// Debian and a local build put it), "" where it is not installed: what a
// lock program and a ZooKeeper server run under to move their wall clock.
//
// It is the thread-safe build, libfaketimeMT, where there is one. The
// other re-reads the offset's file at every reading of the clock
// (FAKETIME_NO_CACHE) into state that threads share without a lock, so
// that a thread now and then reads the clock without the offset: 37–49 of
// 400,000 readings by four Python threads, against none with
// libfaketimeMT. On a MariaDB server, whose connections are threads, one
// connection's NOW() then lags another's by the whole jump, and a
// contender's cleanup deleted a row inserted a millisecond before, long
// after the jump.
func Libfaketime() string {
	if p := os.Getenv("LOCKLAB_LIBFAKETIME"); p != "" {
		return p
	}
	for _, name := range []string{"libfaketimeMT.so.1", "libfaketime.so.1"} {
		for _, dir := range []string{"/usr/lib/*/faketime/", "/usr/lib/faketime/", "/usr/local/lib/faketime/"} {
			if m, _ := filepath.Glob(dir + name); len(m) > 0 {
				return m[0]
			}
		}
	}
	return ""
}

// FindProgram returns the absolute path of the first of names found in dir,
// or on PATH when dir is "".
func FindProgram(dir string, names ...string) (string, bool) {
	for _, name := range names {
		if dir != "" {
			name = filepath.Join(dir, name)
		}
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		// The programs run in the data directory, where a relative path would
		// mean something else.
		if abs, err := filepath.Abs(path); err == nil {
			return abs, true
		}
	}
	return "", false
}

// WaitGroupGone waits, for at most a few seconds, until no process of the group
// pgid runs any more.
func WaitGroupGone(pgid int) {
	deadline := time.Now().Add(reapCap)
	for GroupRunning(pgid) && time.Now().Before(deadline) {
		time.Sleep(reapPoll)
	}
}

// GroupRunning reports whether a process of the group pgid runs. Where /proc tells,
// zombies do not count: they hold no files, and the group's orphans are init's to
// reap, which may take it a second or more.
func GroupRunning(pgid int) bool {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	members, _ := groupMembers(pgid)
	return members > 0
}

// groupMembers counts the processes of the group pgid that are not zombies,
// and says whether its leader (the process whose pid is pgid) is one of
// them, as /proc tells; without /proc it finds none.
func groupMembers(pgid int) (members int, leader bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		if name := e.Name(); name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // it has exited since ReadDir
		}
		// "pid (comm) state ppid pgrp ...", where comm may hold spaces and parentheses.
		i := bytes.LastIndex(stat, []byte(") "))
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+2:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			members++
			leader = leader || e.Name() == f[2]
		}
	}
	return members, leader
}

// LogTail returns the last lines of the log written from offset on.
func LogTail(path string, offset int64, lines int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	// The last 64 KiB hold the tail lines of any log a server writes.
	offset = max(offset, info.Size()-64<<10)
	data, err := io.ReadAll(io.NewSectionReader(f, offset, info.Size()-offset))
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	text := strings.TrimRight(string(data), "\n")
	if text == "" {
		return "(empty)"
	}
	all := strings.Split(text, "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
