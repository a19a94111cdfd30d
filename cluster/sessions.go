package cluster

import "fmt"

// ConnectionsFrom is the query that lists the ids of the server's
// connections from local TCP port port of this machine: those a link made
// for its client (network.Link.UpstreamPorts).
func (d Dialect) ConnectionsFrom(port int) string {
	if d == Pgx {
		return fmt.Sprintf("SELECT pid FROM pg_stat_activity WHERE client_port = %d", port)
	}
	return fmt.Sprintf("SELECT ID FROM information_schema.PROCESSLIST WHERE HOST LIKE '%%:%d'", port)
}
