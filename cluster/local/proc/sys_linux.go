package proc

import "syscall"

// sysProcAttr puts a server in its own process group, so that signals reach its
// forked children too, and has the kernel kill it if the harness dies, so that no
// redis-server outlives a crashed or interrupted test run. Pdeathsig fires when the
// OS thread that started the child ends, and Go ends a thread only when a goroutine
// exits while locked to it, so never start a node from a goroutine that called
// runtime.LockOSThread.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
