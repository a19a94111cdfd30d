package network

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// Ports that StablePort hands out: below Linux's default ephemeral range
// (32768–60999), from which the kernel picks the local port of every
// outgoing connection and of every listener on port 0.
const (
	stableLow  = 20000
	stableHigh = 32767
)

// reserved holds the ports StablePort handed out and not yet given back
// (ReleasePort). A cut link or a killed node leaves its port unbound for a
// while; a parallel run probing for a free port then must not be handed
// it, or the heal's rebind fails with "address already in use". It is
// process-wide because the ports are. Other processes (two test packages
// at once, explore's shards on one machine) draw from the same ports, so
// each held port is also locked in a file they all share (portLockFile).
var reserved = struct {
	sync.Mutex
	ports map[int]bool
	// locks is the shared file, opened on first use; nil where it cannot
	// be, and then ports are reserved within this process only.
	locks  *os.File
	opened bool
}{ports: map[int]bool{}}

// portLockFile holds one record lock (fcntl) per port a locklab process
// holds, at the port's offset. The file stays empty, and the kernel drops a
// process's locks when it ends, however it ends: nothing is left to clean.
// Its place does not follow TMPDIR, which tests and users set per process,
// since every process must find the same file; the dot keeps it out of the
// sweep of dead runs' locklab-* folders.
const portLockFile = "/tmp/.locklab-ports.lock"

// lockPort takes port's lock in the shared file, or reports that another
// process holds it. Called with reserved held.
func lockPort(port int) bool {
	if !reserved.opened {
		reserved.opened = true
		if f, err := os.OpenFile(portLockFile, os.O_RDWR|os.O_CREATE, 0o666); err == nil {
			// Other users' processes share it too, whatever the umask.
			_ = f.Chmod(0o666)
			reserved.locks = f
		}
	}
	if reserved.locks == nil {
		return true
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: int64(port), Len: 1}
	return syscall.FcntlFlock(reserved.locks.Fd(), syscall.F_SETLK, &lk) == nil
}

// unlockPort gives port's lock in the shared file back. Called with
// reserved held.
func unlockPort(port int) {
	if reserved.locks == nil {
		return
	}
	lk := syscall.Flock_t{Type: syscall.F_UNLCK, Whence: io.SeekStart, Start: int64(port), Len: 1}
	_ = syscall.FcntlFlock(reserved.locks.Fd(), syscall.F_SETLK, &lk)
}

// StablePort returns a loopback port that is free now, lies outside the
// kernel's ephemeral range, and that no other caller holds, in this process
// or another locklab process.
// A link or node that goes down and later rebinds its port (a cut healed, a
// node restarted) needs one: an ephemeral port freed for the fault's while
// can be handed to any new connection on the machine. The caller gives it
// back with ReleasePort once it is done with it.
func StablePort() (int, error) {
	var err error
	for range 100 {
		port := stableLow + rand.IntN(stableHigh-stableLow+1)
		reserved.Lock()
		taken := reserved.ports[port] || !lockPort(port)
		if !taken {
			reserved.ports[port] = true
		}
		reserved.Unlock()
		if taken {
			continue
		}
		var l net.Listener
		if l, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			l.Close()
			return port, nil
		}
		ReleasePort(port)
	}
	return 0, fmt.Errorf("no free loopback port in %d-%d: %w", stableLow, stableHigh, err)
}

// ReleasePort gives back a port StablePort handed out; releasing a port
// twice, or one it never handed out, does nothing.
func ReleasePort(port int) {
	reserved.Lock()
	defer reserved.Unlock()
	if reserved.ports[port] {
		delete(reserved.ports, port)
		unlockPort(port)
	}
}
