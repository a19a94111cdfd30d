package cluster

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/locklab/locklab/network"
)

// Node is one server of a cluster, whatever it runs (a redis-server, an
// etcd member, a memcached), however its backend runs it: what every node
// operation of a fault needs. Its methods may be called from several
// goroutines.
type Node interface {
	// Name is the node's name from its NodeConfig or ServerSpec ("n1",
	// "inventory", "s2", "m1").
	Name() string
	// Addr is the host:port the harness and its links dial; it stays the
	// same across restarts.
	Addr() string
	// Running reports whether the node is up; a paused node is running.
	Running() bool
	// Kill stops the node at once, with no shutdown: a real crash.
	Kill() error
	// Restart starts the node again at the same address, with or without
	// the data it had on disk.
	Restart(ctx context.Context, keepData bool) error
	// Pause freezes the node: it keeps its connections and answers nothing.
	Pause() error
	// Resume ends a Pause.
	Resume() error
	// Stop kills the node and removes what it left; it may be called twice.
	Stop() error
}

// ServerRestarter is a Database that a node fault can crash and restart
// on the same port with its data: the local backend's MariaDB. The
// others take no node fault.
type ServerRestarter interface {
	Kill() error
	Restart(ctx context.Context) error
}

// NodesOf is ns as Nodes, in order: a server set's Nodes.
func NodesOf[N Node](ns []N) []Node {
	nodes := make([]Node, len(ns))
	for i, n := range ns {
		nodes[i] = n
	}
	return nodes
}

// Addrs are the addresses of ns, in order: a server set's Endpoints.
func Addrs[N Node](ns []N) []string {
	addrs := make([]string, len(ns))
	for i, n := range ns {
		addrs[i] = n.Addr()
	}
	return addrs
}

// ClockJumper is a Node whose clock can be moved for real: a ZooKeeper
// server's wall clock, its monotonic clock left as it is, as a clock
// stepped by NTP or an operator is (libfaketime in its JVM); a server
// started with ServerSpec.Clock on local processes (memcached), both of
// its clocks, since it times expiry by the monotonic one. Go servers
// (etcd, the harness) read the clock through the vDSO, which libfaketime
// cannot reach, so their nodes are not ClockJumpers.
type ClockJumper interface {
	// JumpClock moves the node's clock forward by d, for good.
	JumpClock(d time.Duration) error
}

// ServerProcess is a Node or Database whose server runs on this machine,
// where the lag meter can read how long its threads waited for a core.
type ServerProcess interface {
	// Pid is the id, as this machine's /proc numbers it, of the process at
	// the top of the server (a local server's own, a container's first), or
	// 0 while none runs or this process cannot see it as the server's.
	Pid() int
}

// Database is an SQL server: MariaDB, the SQL inventory of the
// transaction pitfall or the lock table of the mariadb topology, or
// PostgreSQL, the lock table of the postgres topology (and its inventory).
// A backend starts one with its StartMariaDB or StartPostgres (dir string),
// which the SQL services' package (service/sqldb) finds on the RunSession;
// a backend without PostgreSQL returns an error wrapping ErrNoPostgres.
type Database interface {
	// Driver is the database/sql driver name its DSN is for: "mysql"
	// (github.com/go-sql-driver/mysql) or "pgx"
	// (github.com/jackc/pgx/v5/stdlib).
	Driver() string
	// DSN is a data source name for sql.Open(Driver(), dsn).
	DSN() string
	// SetupInventory creates the inventory row with stock units.
	SetupInventory(ctx context.Context, stock int64) error
	// Stock reads the committed stock.
	Stock(ctx context.Context) (int64, error)
	// Admin is a pool past any link, as root with no default database,
	// for the harness's own use.
	Admin() *sql.DB
	// Stop ends the server and removes its files; it may be called twice.
	Stop() error
}

// ErrNoPostgres means a backend cannot start PostgreSQL: it is not
// installed, or the backend has no way to run it. A run that needs it is
// skipped with the error's one line, as one that lacks MariaDB is.
var ErrNoPostgres = errors.New("PostgreSQL not available")

// Backend starts the servers of runs: local processes, or containers. Every
// run's servers are started through the RunSession that StartRun returns,
// and Ready says beforehand, in one line, why none could start.
type Backend interface {
	// Name is the backend's name, as the CLI's -backend flag takes it.
	Name() string
	// Ready says, in one line naming the fix, why the backend cannot start
	// a run's servers, or nil; mariaDB says whether the run needs MariaDB
	// too (a backend that skips such runs one by one may ignore it).
	Ready(ctx context.Context, mariaDB bool) error
	// StartRun readies what one run's servers share (the docker backend's
	// network, say) and returns the RunSession that starts them. Start
	// calls it first and closes the session last.
	StartRun(ctx context.Context) (RunSession, error)
}

// RunSession starts the servers of one run of a Backend.
type RunSession interface {
	// Name is the name of the Backend that started the run.
	Name() string
	// StartNode starts one redis-server as cfg says and returns once it
	// answers. With cfg.Sentinel set it runs as a Sentinel. Its Node also
	// has Admin, a go-redis client past any link, which only the Redis
	// service's package names (service/redis/sentinel.Node).
	StartNode(ctx context.Context, cfg NodeConfig) (Node, error)
	// Close removes what the run left that its servers' Stop did not; it may
	// be called twice.
	Close() error
}

// Networked is a RunSession whose servers reach each other by name on a
// network of their own, as containers do, rather than on 127.0.0.1. The
// replicated topology then runs replication and Sentinel on that network,
// where the path from one replica to its master can be cut on its own, with
// no re-pointing; its data nodes are started with NodeConfig.Peers.
type Networked interface {
	RunSession
	// PeerAddr is the host:port by which the other servers of the run reach
	// the node called name; the Sentinels report nodes by it.
	PeerAddr(name string) string
	// CutReplication cuts the network path between replica and master, and
	// nothing else: both still answer the Sentinels and the clients.
	CutReplication(ctx context.Context, replica, master Node) (network.Heal, error)
}

// Operation is what a fault asks of a backend's nodes, which a backend may
// do otherwise than a local process does (see FaultNoter).
type Operation string

const (
	NodeKill       Operation = "node kill"       // SIGKILL a node, then restart it
	NodePause      Operation = "node pause"      // freeze a node, then let it go on
	ReplicationCut Operation = "replication cut" // cut a replica off its master
)

// FaultNoter is a Backend whose node operations are done otherwise than the
// fault labels say, which name the local processes' means (SIGSTOP, a
// toxiproxy link); a run adds its notes to the labels of the faults that
// use them, so that the report stays honest.
type FaultNoter interface {
	// FaultNotes says, per operation done otherwise, how this backend does it.
	FaultNotes() map[Operation]string
}
