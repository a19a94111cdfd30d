//go:build !linux

package local

import "syscall"

// nodeSysProcAttr puts redis-server in its own process group, so that signals reach its
// forked children too. Without Linux's Pdeathsig a redis-server can outlive a harness
// that is itself killed; Stop and Kill still end it on every normal path.
func nodeSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
