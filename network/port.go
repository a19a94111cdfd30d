package network

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

// Ports that StablePort hands out: below Linux's default ephemeral range
// (32768–60999), from which the kernel picks the local port of every
// outgoing connection and of every listener on port 0.
const (
	stableLow  = 20000
	stableHigh = 32767
)

// StablePort returns a loopback port that is free now and lies outside the
// kernel's ephemeral range. A link or node that goes down and later rebinds
// its port (a cut healed, a node restarted) needs one: an ephemeral port
// freed for the fault's while can be handed to any new connection on the
// machine, and the rebind then fails with "address already in use".
func StablePort() (int, error) {
	var err error
	for range 100 {
		port := stableLow + rand.IntN(stableHigh-stableLow+1)
		var l net.Listener
		if l, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free loopback port in %d-%d: %w", stableLow, stableHigh, err)
}
