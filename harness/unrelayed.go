package harness

import "strings"

// Unrelayed says why faults at a lock program's own requests cannot strike
// it on the service e names, or "" when a relay can read its requests and
// strike them (Redis: package program's relay reads RESP, on replicated
// behind relayed Sentinels that name it, Endpoints.SentinelRelay;
// PostgreSQL's simple and extended queries; MariaDB's COM_QUERY;
// memcached's text protocol; ZooKeeper's jute; etcd's gRPC). A program
// dials e itself, through the client's links, so network faults and its
// process's crash, pause and clock skew still reach it.
func (e Endpoints) Unrelayed() string {
	switch {
	case len(e.Sentinels) > 0 && e.SentinelRelay == nil:
		return "the lock is a program on the replicated topology with no relayed Sentinels: Sentinel hands it the nodes' own addresses, past locklab's relay, so no fault can strike its commands"
	case len(e.Env) > 0 && !relayedEnv(e.Env):
		return "the lock is a program on a service started through the seam whose protocol no relay of locklab's reads, so no fault can strike its requests (a Go lock's are struck by its handle, through Client.Request)"
	}
	return ""
}

// relayedEnv reports whether the environment of a seam service (Dialer.Env)
// names addresses whose protocol package program's relay reads: those of
// LOCKLAB_MEMCACHED, memcached's text protocol, LOCKLAB_ZOOKEEPER,
// ZooKeeper's jute, and LOCKLAB_ETCD, etcd's gRPC. Package program keeps
// the same list (seamProtocol), with the protocol of each.
func relayedEnv(env []string) bool {
	for _, kv := range env {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "LOCKLAB_MEMCACHED", "LOCKLAB_ZOOKEEPER", "LOCKLAB_ETCD":
			return true
		}
	}
	return false
}
