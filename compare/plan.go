package compare

import (
	"slices"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/fault"
)

// This file is the comparison's plan, kept as plain data: a row is one line
// of Rows, and a scenario for a fault class on a topology one line of
// scenarioFor.

// Fault classes, the columns of the comparison: fault's classes, which
// every kind of fault names one of (fault.Kind.Class), by the names the
// rows and options here use.
const (
	Pause     = string(fault.ClassPause)     // the holder stops past its lease
	CutOff    = string(fault.ClassCutOff)    // the holder loses its link to the lock
	Failover  = string(fault.ClassFailover)  // a lock node is killed and restarted, or the leader or master fails over
	ClockJump = string(fault.ClassClockJump) // a clock jumps
	LostReply = string(fault.ClassLostReply) // a reply to the lock's command is lost
	Pool      = string(fault.ClassPool)      // the requests of one service share a pool smaller than its waiters
)

// Families of locks, as the text under the table groups them.
const (
	InProcess = "in-process"
	Redis     = "Redis"
	Database  = "database"
	Consensus = "consensus"
	Cache     = "cache"
)

// Classes are the columns, in order, with their headings: every class of
// fault.Classes, in its order, so that a class is named in one place.
func Classes() []Class {
	var cs []Class
	for _, c := range fault.Classes() {
		cs = append(cs, Class{Name: string(c), Title: c.Title()})
	}
	return cs
}

// Rows are the locks compared, in order. A row whose lock this build does
// not have is left out with a note, so that a row can be written before
// its lock lands.
var Rows = []Row{
	{Lock: "in-process", Title: "in-process mutex", Family: InProcess, Topologies: []cluster.Topology{cluster.Single},
		Why: map[string]string{Failover: "the lock lives in each process: there is no lock node to kill",
			Pool:      "the lock lives in each process: it takes no pooled connection",
			LostReply: "the lock lives in each process: it sends no command whose reply could be lost (lost-acquire-reply would not be exercised)"}},
	{Lock: "token-watchdog", Title: "Redis token + watchdog", Family: Redis, Topologies: []cluster.Topology{cluster.Single, cluster.Replicated}},
	{Lock: "wait-replicas", Title: "Redis + WAIT", Family: Redis, Topologies: []cluster.Topology{cluster.Replicated},
		Scenarios: map[string]string{Failover: "failover-wait"}},
	{Lock: "redlock", Title: "Redlock", Family: Redis, Topologies: []cluster.Topology{cluster.Redlock}},
	{Lock: "fenced", Title: "fenced Redis", Family: Redis, Topologies: []cluster.Topology{cluster.Single, cluster.Replicated}},
	{Lock: "redislock-refresh", Title: "bsm/redislock + refresh", Family: Redis, Topologies: []cluster.Topology{cluster.Single, cluster.Replicated}},
	{Lock: "redsync-refresh", Title: "redsync + extend", Family: Redis, Topologies: []cluster.Topology{cluster.Redlock, cluster.Single}},
	{Lock: "redsync", Title: "redsync", Family: Redis, Topologies: []cluster.Topology{cluster.Redlock, cluster.Single}},
	{Lock: "redislock", Title: "bsm/redislock", Family: Redis, Topologies: []cluster.Topology{cluster.Single, cluster.Replicated}},
	{Lock: "exec:/usr/bin/python3 programs/redispy.py --renew", File: "programs/redispy.py", Title: "redis-py Lock + renew (program)",
		Family: Redis, Topologies: []cluster.Topology{cluster.Single, cluster.Replicated}, Why: map[string]string{Pool: programPoolWhy}},
	{Lock: "unique-row", Title: "unique row", Family: Database, Topologies: []cluster.Topology{cluster.MariaDBTopology}},
	{Lock: "for-update-tx", Title: "FOR UPDATE", Family: Database, Topologies: []cluster.Topology{cluster.MariaDBTopology}},
	{Lock: "optimistic", Title: "optimistic version", Family: Database, Topologies: []cluster.Topology{cluster.MariaDBTopology},
		Why: map[string]string{LostReply: "cannot apply: no lock, so its acquire sends no statement whose reply could be lost (lost-acquire-reply-sql would be spoiled)"}},
	{Lock: "get-lock", Title: "GET_LOCK", Family: Database, Topologies: []cluster.Topology{cluster.MariaDBTopology}},
	{Lock: "advisory-pinned", Title: "Postgres advisory", Family: Database, Topologies: []cluster.Topology{cluster.PostgresTopology}},
	{Lock: "exec:php programs/mariadb-get-lock.php", File: "programs/mariadb-get-lock.php", Title: "PDO GET_LOCK (program)",
		Family: Database, Topologies: []cluster.Topology{cluster.MariaDBTopology}, Why: map[string]string{Pool: programPoolWhy}},
	{Lock: "exec:/usr/bin/python3 programs/pg-advisory.py", File: "programs/pg-advisory.py", Title: "psycopg2 advisory (program)",
		Family: Database, Topologies: []cluster.Topology{cluster.PostgresTopology}, Why: map[string]string{Pool: programPoolWhy}},
	{Lock: "zk-lock", Title: "ZooKeeper recipe", Family: Consensus, Topologies: []cluster.Topology{cluster.ZooKeeperTopology}},
	{Lock: "zk-fenced", Title: "ZooKeeper fenced", Family: Consensus, Topologies: []cluster.Topology{cluster.ZooKeeperTopology}},
	{Lock: "exec:/usr/bin/python3 programs/zk-lock.py", File: "programs/zk-lock.py", Title: "kazoo Lock (program)",
		Family: Consensus, Topologies: []cluster.Topology{cluster.ZooKeeperTopology}},
	{Lock: "etcd-mutex", Title: "etcd mutex", Family: Consensus, Topologies: []cluster.Topology{cluster.EtcdTopology}},
	{Lock: "etcd-mutex-guarded", Title: "etcd guarded write", Family: Consensus, Topologies: []cluster.Topology{cluster.EtcdTopology}},
	{Lock: "exec:/usr/bin/python3 programs/etcd-lease.py", File: "programs/etcd-lease.py", Title: "python-etcd3 lease lock (program)",
		Family: Consensus, Topologies: []cluster.Topology{cluster.EtcdTopology}},
	{Lock: "memcached", Title: "memcached add + cas", Family: Cache, Topologies: []cluster.Topology{cluster.MemcachedTopology}},
}

// familyOf is the family of each service's locks, for a user's lock.
var familyOf = map[cluster.Service]string{
	cluster.Redis: Redis, cluster.MariaDB: Database, cluster.PostgreSQL: Database,
	cluster.Etcd: Consensus, cluster.ZooKeeper: Consensus, cluster.Memcached: Cache,
}

// familyIndex orders the families as the table shows them.
func familyIndex(f string) int {
	return slices.Index([]string{InProcess, Redis, Database, Consensus, Cache}, f)
}

// Reasons for cells not built yet, or that cannot apply, as their notes say.
const (
	programPoolWhy = "cannot apply: a lock program is a process of its own, with connections of its own: " +
		"it cannot share the service's pool (the runs would be spoiled)"
)

// whyNot says why a class cannot apply on a topology, for every row on it
// that has no scenario of the class elsewhere: the "—" that stays.
var whyNot = map[where]string{
	{Pool, cluster.EtcdTopology}: "cannot apply: an etcd client multiplexes every request on one gRPC connection, " +
		"so a waiter holds no pooled connection that the holder would need",
	{Pool, cluster.ZooKeeperTopology}: "cannot apply: a ZooKeeper client is one session on one connection, its requests pipelined: " +
		"a waiter holds no pooled connection that the holder would need",
	{ClockJump, cluster.EtcdTopology}: "cannot apply: etcd times leases with Go's monotonic clock (lease.Remaining: time.Until), which a " +
		"wall-clock jump does not move; nor can an etcd member's wall clock be moved here (Go reads it through the vDSO, past libfaketime)",
}

// scenarioFor is the scenario that strikes a fault class on a topology. A
// class missing here for a row's topologies is a "—" cell.
var scenarioFor = map[where]string{
	{Pause, cluster.Single}:                "pause-holder",
	{CutOff, cluster.Single}:               "holder-cut-off",
	{ClockJump, cluster.Single}:            "clock-skew",
	{LostReply, cluster.Single}:            "lost-acquire-reply",
	{Failover, cluster.Replicated}:         "failover",
	{Pause, cluster.Redlock}:               "redlock-pause",
	{Failover, cluster.Redlock}:            "redlock-restart",
	{ClockJump, cluster.Redlock}:           "redlock-clock-jump",
	{Pause, cluster.MariaDBTopology}:       "pause-holder-sql",
	{CutOff, cluster.MariaDBTopology}:      "kill-connection-sql",
	{Pool, cluster.MariaDBTopology}:        "pool-sql",
	{Pause, cluster.PostgresTopology}:      "pause-holder-postgres",
	{CutOff, cluster.PostgresTopology}:     "kill-connection-postgres",
	{Pause, cluster.EtcdTopology}:          "pause-holder-etcd",
	{Failover, cluster.EtcdTopology}:       "kill-leader-etcd",
	{Pause, cluster.ZooKeeperTopology}:     "pause-holder-zk",
	{Failover, cluster.ZooKeeperTopology}:  "kill-leader-zk",
	{ClockJump, cluster.ZooKeeperTopology}: "clock-jump-zk",
	{Pause, cluster.MemcachedTopology}:     "pause-holder-memcached",
	{CutOff, cluster.MemcachedTopology}:    "holder-cut-off-memcached",
	{Failover, cluster.MemcachedTopology}:  "restart-memcached",
	{LostReply, cluster.MemcachedTopology}: "lost-acquire-reply-memcached",
	// check compare's own (scenarios.Compared).
	{LostReply, cluster.Redlock}:           "lost-acquire-reply-redlock",
	{Failover, cluster.MariaDBTopology}:    "restart-sql",
	{Failover, cluster.PostgresTopology}:   "restart-postgres",
	{ClockJump, cluster.MariaDBTopology}:   "clock-jump-sql",
	{ClockJump, cluster.PostgresTopology}:  "clock-jump-postgres",
	{CutOff, cluster.Redlock}:              "redlock-cut-off",
	{CutOff, cluster.EtcdTopology}:         "holder-cut-off-etcd",
	{CutOff, cluster.ZooKeeperTopology}:    "holder-cut-off-zk",
	{LostReply, cluster.MariaDBTopology}:   "lost-acquire-reply-sql",
	{LostReply, cluster.PostgresTopology}:  "lost-acquire-reply-postgres",
	{LostReply, cluster.EtcdTopology}:      "lost-acquire-reply-etcd",
	{Pool, cluster.PostgresTopology}:       "pool-postgres",
	{Pause, cluster.Replicated}:            "pause-holder-replicated",
	{CutOff, cluster.Replicated}:           "holder-cut-off-replicated",
	{ClockJump, cluster.Replicated}:        "clock-skew-replicated",
	{LostReply, cluster.Replicated}:        "lost-acquire-reply-replicated",
	{Pool, cluster.Single}:                 "pool",
	{Pool, cluster.Replicated}:             "pool-replicated",
	{Pool, cluster.Redlock}:                "pool-redlock",
	{Pool, cluster.MemcachedTopology}:      "pool-memcached",
	{LostReply, cluster.ZooKeeperTopology}: "lost-acquire-reply-zk",
	{ClockJump, cluster.MemcachedTopology}: "clock-jump-memcached",
}
