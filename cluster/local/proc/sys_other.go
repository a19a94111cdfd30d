//go:build !linux

package proc

import "syscall"

// sysProcAttr puts a server in its own process group, so that signals reach its
// forked children too. Without Linux's Pdeathsig a redis-server can outlive a harness
// that is itself killed; Stop and Kill still end it on every normal path.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
