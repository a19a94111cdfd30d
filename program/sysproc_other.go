//go:build unix && !linux

package program

import "syscall"

// sysProcAttr puts the program in a process group of its own, so that a
// crash or a pause reaches everything it started.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
