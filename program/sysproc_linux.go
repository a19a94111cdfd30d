package program

import "syscall"

// sysProcAttr puts the program in a process group of its own, so that a
// crash or a pause reaches everything it started, and has the kernel kill
// it if locklab dies (Ctrl-C of a test binary, SIGKILL), so that no program
// outlives a run. Pdeathsig fires when the OS thread that started the
// child ends; Go ends a thread only when a goroutine exits locked to it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
