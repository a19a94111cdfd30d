package network

import "net"

// UpstreamPorts are the local ports of the link's open connections to its
// upstream: how the node sees them (a server's list of its clients), so
// that a fault can find on the server the sessions of whoever dials the
// link, such as a lock program, whose own ids locklab never learns.
func (l *Link) UpstreamPorts() []int {
	l.connMu.Lock()
	defer l.connMu.Unlock()
	var ports []int
	for c := range l.conns {
		if a, ok := c.upstream.LocalAddr().(*net.TCPAddr); ok {
			ports = append(ports, a.Port)
		}
	}
	return ports
}
