// Package sqldb is locklab's SQL lock services, MariaDB and PostgreSQL,
// behind the seam: each is a Service that starts its server on any
// backend with the lock table (LockTable) on it (cluster.LockService),
// reads a lock's state there (its row, named lock or advisory lock), and
// dials each client's pool through the client's own link (harness.Dialer).
// A client's pool passes the client's failpoints statement by statement,
// stops while it is paused and closes when it crashes, so that the server
// ends its sessions and what they held. The package also starts the SQL
// inventory (MariaDBInventory, PostgresInventory) and opens a service's
// shared pool (OpenSharedPool). It and the backends are the only packages
// of locklab that name the SQL drivers' types.
package sqldb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// MariaDB is the MariaDB lock service: the lock is a row of the lock
// table, a row lock or a named lock (GET_LOCK).
type MariaDB struct{}

// Postgres is the PostgreSQL lock service: the lock is a row of the lock
// table or an advisory lock.
type Postgres struct{}

// Name is the service of the mariadb topology.
func (MariaDB) Name() cluster.Service { return cluster.MariaDB }

// Name is the service of the postgres topology.
func (Postgres) Name() cluster.Service { return cluster.PostgreSQL }

// mariaDBStarter and postgresStarter are a backend's RunSession that starts
// the server itself (cluster/local, cluster/docker), as it knows where its
// programs or images are.
type (
	mariaDBStarter interface {
		StartMariaDB(ctx context.Context, dir string) (cluster.Database, error)
	}
	postgresStarter interface {
		StartPostgres(ctx context.Context, dir string) (cluster.Database, error)
	}
)

// startMariaDB starts a MariaDB server on run, its files under dir.
func startMariaDB(ctx context.Context, run cluster.RunSession, dir string) (cluster.Database, error) {
	s, ok := run.(mariaDBStarter)
	if !ok {
		return nil, fmt.Errorf("the %s backend cannot start MariaDB", run.Name())
	}
	return s.StartMariaDB(ctx, dir)
}

// Start starts the MariaDB server with the lock table on it.
func (MariaDB) Start(ctx context.Context, run cluster.RunSession, dir string) (cluster.Deployment, error) {
	db, err := startMariaDB(ctx, run, dir)
	if err != nil {
		return nil, err
	}
	return newDeployment(ctx, db)
}

// Start starts the PostgreSQL server with the lock table on it.
func (Postgres) Start(ctx context.Context, run cluster.RunSession, dir string) (cluster.Deployment, error) {
	s, ok := run.(postgresStarter)
	if !ok {
		return nil, fmt.Errorf("%w: the %s backend cannot start it", cluster.ErrNoPostgres, run.Name())
	}
	db, err := s.StartPostgres(ctx, dir)
	if err != nil {
		return nil, err
	}
	return newDeployment(ctx, db)
}

// deployment is the lock table's server of one run.
type deployment struct {
	db      cluster.Database
	dialect Dialect
	node    *server
}

// newDeployment sets up the lock table on db; it stops db when it cannot.
func newDeployment(ctx context.Context, db cluster.Database) (*deployment, error) {
	d := &deployment{db: db, dialect: Dialect(db.Driver())}
	cfg, err := parseDSN(d.dialect, db.DSN(), 0)
	if err == nil {
		err = setupLockTable(ctx, db)
	}
	if err != nil {
		db.Stop()
		return nil, err
	}
	d.node = &server{db: db, addr: cfg.Addr()}
	return d, nil
}

// Nodes is the one server, which each client reaches through a link of
// its own.
func (d *deployment) Nodes() []cluster.Node { return []cluster.Node{d.node} }

// Stop stops the server and removes its files.
func (d *deployment) Stop() error { return d.db.Stop() }

// errUnknownThread is MariaDB's answer to KILL of a connection already gone.
const errUnknownThread = 1094

// KillConnection has the server end connection id, as an administrator
// does, past any link (cluster.ConnectionKiller). PostgreSQL answers false
// for a connection gone already, MariaDB an error this skips.
func (d *deployment) KillConnection(ctx context.Context, id int64) error {
	_, err := d.db.Admin().ExecContext(ctx, d.dialect.KillConnection(id))
	if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == errUnknownThread {
		return nil // closed already
	}
	if err != nil || d.dialect == Pgx {
		return err // PostgreSQL's kill waits for the connection's end
	}
	return d.awaitGone(ctx, id)
}

// Holds reports whether connection id holds key's lock in its session
// (cluster.ConnectionKiller): on MariaDB, key's named lock (IS_USED_LOCK
// names its connection) or an open transaction holding row locks (a FOR
// UPDATE lock); on PostgreSQL, an advisory lock (on any key: a client's
// sessions hold no other) or a transaction's row-share lock on the lock
// table (FOR UPDATE takes one).
func (d *deployment) Holds(ctx context.Context, id int64, key string) (bool, error) {
	var held bool
	var err error
	if d.dialect == Pgx {
		// Any advisory lock of the session counts, whatever its key's hash:
		// a client's sessions hold no other.
		err = d.db.Admin().QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND granted AND "+
			"(locktype = 'advisory' OR (locktype = 'relation' AND relation = '"+LockTable+"'::regclass AND mode = 'RowShareLock')))", id).Scan(&held)
	} else {
		err = d.db.Admin().QueryRowContext(ctx, "SELECT IFNULL(IS_USED_LOCK(?) = ?, FALSE) OR EXISTS (SELECT 1 FROM information_schema.INNODB_TRX "+
			"WHERE trx_mysql_thread_id = ? AND trx_rows_locked > 0)", key, id, id).Scan(&held)
	}
	if err != nil {
		return false, fmt.Errorf("read what connection %d holds: %w", id, err)
	}
	return held, nil
}

// awaitGone returns once MariaDB's connection id is gone from its process
// list, and with it what it held: KILL only marks it, and the connection's
// thread ends it. It gives up after killWait.
func (d *deployment) awaitGone(ctx context.Context, id int64) error {
	ctx, cancel := context.WithTimeout(ctx, killWait)
	defer cancel()
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		var n int
		err := d.db.Admin().QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&n)
		if err != nil || n == 0 {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("connection %d still there %s after KILL: %w", id, killWait, ctx.Err())
		case <-t.C:
		}
	}
}

// ConnectionsFrom lists the server's connections from local TCP port port
// (cluster.ConnectionKiller).
func (d *deployment) ConnectionsFrom(ctx context.Context, port int) ([]int64, error) {
	rows, err := d.db.Admin().QueryContext(ctx, d.dialect.ConnectionsFrom(port))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Close()
}

// Server is the lock table's server of cl, past any link, or nil when cl
// runs no SQL lock service: for a test's own statements.
func Server(cl *cluster.Cluster) cluster.Database {
	if d, ok := cl.Deployment().(*deployment); ok {
		return d.db
	}
	return nil
}

// DialectOf is the dialect of cl's lock table's server, or "" when cl runs
// no SQL lock service.
func DialectOf(cl *cluster.Cluster) Dialect {
	if d, ok := cl.Deployment().(*deployment); ok {
		return d.dialect
	}
	return ""
}

// server is the deployment's server as a lock node, what each client
// links to. Its backend runs it, but not as a node a fault can pause,
// and only the local MariaDB as one it can kill and restart
// (cluster.ServerRestarter): the SQL scenarios' faults are on links, connections
// and clients.
type server struct {
	db   cluster.Database
	addr string
}

// errNoNodeFault is the answer of the server to a node fault.
var errNoNodeFault = errors.New("sqldb: the SQL server takes no node fault")

// Name is the node's name, which its clients' links are named by
// ("c1-sql").
func (s *server) Name() string { return "sql" }

// Addr is the server's host:port.
func (s *server) Addr() string { return s.addr }

// Running is true: the server runs until the run stops it.
func (s *server) Running() bool { return true }

// Kill crashes the server where its backend can (cluster.ServerRestarter);
// elsewhere it is refused.
func (s *server) Kill() error {
	if r, ok := s.db.(cluster.ServerRestarter); ok {
		return r.Kill()
	}
	return errNoNodeFault
}

// Restart starts a killed server again with its data, whatever keepData
// says: a database keeps what it committed.
func (s *server) Restart(ctx context.Context, _ bool) error {
	if r, ok := s.db.(cluster.ServerRestarter); ok {
		return r.Restart(ctx)
	}
	return errNoNodeFault
}

// JumpClock moves the server's wall clock where its backend can
// (cluster.ClockJumper: the local processes, under libfaketime); elsewhere
// it is refused, and the run that asked is spoiled.
func (s *server) JumpClock(d time.Duration) error {
	if j, ok := s.db.(cluster.ClockJumper); ok {
		return j.JumpClock(d)
	}
	return errors.New("sqldb: this backend's SQL server cannot have its clock moved (only the local one, under libfaketime)")
}

// Pause is refused.
func (s *server) Pause() error { return errNoNodeFault }

// Resume is refused.
func (s *server) Resume() error { return errNoNodeFault }

// Stop stops the server; it may be called twice.
func (s *server) Stop() error { return s.db.Stop() }

// Pid is the server's process, for the lag meter (cluster.ServerProcess).
func (s *server) Pid() int {
	if p, ok := s.db.(cluster.ServerProcess); ok {
		return p.Pid()
	}
	return 0
}

// Reference is the unique-row lock, the SQL topologies' correct lock.
func (MariaDB) Reference() (string, harness.NewLocker) { return "unique-row", NewUniqueRowLock }

// Reference is the unique-row lock, the SQL topologies' correct lock.
func (Postgres) Reference() (string, harness.NewLocker) { return "unique-row", NewUniqueRowLock }

// Source is the package's Go files (service.Service).
func (MariaDB) Source() fs.FS { return Source }

// Source is the package's Go files (service.Service).
func (Postgres) Source() fs.FS { return Source }
