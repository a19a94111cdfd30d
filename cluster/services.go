package cluster

import (
	"slices"
	"strings"
)

// order is the order topologies are listed in: Redis's first, as
// everywhere else. A topology missing here is listed after them, by name.
var order = []Topology{Single, Replicated, Redlock, MariaDBTopology, PostgresTopology, EtcdTopology, ZooKeeperTopology, MemcachedTopology}

// Topologies lists every topology, in order.
func Topologies() []Topology {
	ts := make([]Topology, 0, len(topologies))
	for t := range topologies {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b Topology) int {
		ia, ib := slices.Index(order, a), slices.Index(order, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(string(a), string(b))
	})
	return ts
}

// Services lists every lock service, in the order of their first topology.
func Services() []Service {
	var ss []Service
	for _, t := range Topologies() {
		if s := t.Service(); !slices.Contains(ss, s) {
			ss = append(ss, s)
		}
	}
	return ss
}

// TopologiesOf lists the topologies that deploy service s, in order; none
// when s names no service.
func TopologiesOf(s Service) []Topology {
	var ts []Topology
	for _, t := range Topologies() {
		if t.Service() == s {
			ts = append(ts, t)
		}
	}
	return ts
}

// Memcached is the other cache applications lock on: a lock is an item
// added with an expiry (service/memcached).
const Memcached Service = "memcached"

// MemcachedTopology is one memcached server, the lock node.
const MemcachedTopology Topology = "memcached"

// Etcd is the lock service of the etcd topology: a three-member etcd
// cluster that replicates every write through Raft (service/etcd).
const Etcd Service = "etcd"

// EtcdTopology is three etcd members, each a lock node: a lock is a key
// attached to a lease (concurrency.Mutex), and a write is committed once a
// majority has it, so a failover loses no lock (compare Redis's pitfall 10).
const EtcdTopology Topology = "etcd"

// EtcdMembers is how many members the etcd topology starts: the smallest
// cluster that survives the loss of one.
const EtcdMembers = 3

// ZooKeeper is the lock service of the zookeeper topology: a three-server
// ZooKeeper ensemble that replicates every write through Zab
// (service/zookeeper).
const ZooKeeper Service = "zookeeper"

// ZooKeeperTopology is three ZooKeeper servers, each a lock node: a lock
// is an ephemeral sequential node that lives as long as its holder's
// session, and a write is committed once a quorum has it, so a failover
// loses no lock (compare Redis's pitfall 10).
const ZooKeeperTopology Topology = "zookeeper"

// ZooKeeperServers is how many servers the zookeeper topology starts: the
// smallest ensemble that survives the loss of one.
const ZooKeeperServers = 3
