package network

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
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
// while; a parallel run of this process probing for a free port then must
// not be handed it, or the heal's rebind fails with "address already in
// use". It is process-wide because the ports are; another process can
// still take such a port, which the kernel's refusal then reports.
var reserved = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// StablePort returns a loopback port that is free now, lies outside the
// kernel's ephemeral range, and that no other caller in this process holds.
// A link or node that goes down and later rebinds its port (a cut healed, a
// node restarted) needs one: an ephemeral port freed for the fault's while
// can be handed to any new connection on the machine. The caller gives it
// back with ReleasePort once it is done with it.
func StablePort() (int, error) {
	var err error
	for range 100 {
		port := stableLow + rand.IntN(stableHigh-stableLow+1)
		reserved.Lock()
		taken := reserved.ports[port]
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
	delete(reserved.ports, port)
}
