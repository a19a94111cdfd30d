package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/locklab/locklab/harness/socket"
)

// user is what a pool needs of the client its connections serve
// (owner), or of none (nobody, a shared pool's).
type user interface {
	socket.Gate
	// Statement sends one statement of the lock's, in the phase ctx
	// carries, through the failpoints armed on the lock's commands; one
	// sent in no phase (the client's own) is sent as it is.
	Statement(ctx context.Context, query string, send func() error) error
	// StatementRows is Statement for a statement whose send returns how
	// many rows it changed, which the history records.
	StatementRows(ctx context.Context, query string, send func() (int64, error)) error
	// EndTx sends a transaction's COMMIT or ROLLBACK (query) through the
	// failpoints in the phase the worker is in now, not the one it began
	// in: a lock that holds a transaction from its acquire commits it in
	// its release.
	EndTx(ctx context.Context, query string, send func() error) error
}

// pool is a client's pool on the lock table's server.
type pool struct {
	db      *sql.DB
	dialect Dialect

	mu      sync.Mutex
	ids     []int64    // the server-side id of every connection opened
	sockets []net.Conn // what a crash closes
}

// openPool opens client's pool as cfg says, with at most size connections,
// all kept open once made. It fails only on a configuration the driver
// refuses.
func openPool(cfg dialConfig, u user, size int) (*pool, error) {
	p := &pool{dialect: cfg.Dialect()}
	var conns driver.Connector
	if cfg.pg != nil {
		pg := cfg.pg.Copy()
		pg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			// pgx has no read or write timeout, only the caller's
			// context: each connection gives up a read or a write after
			// the timeout, as the MariaDB driver's do.
			return p.dial(ctx, network, addr, u, cfg.timeout)
		}
		conns = stdlib.GetConnector(*pg)
	} else {
		my := cfg.mysql.Clone()
		my.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return p.dial(ctx, network, addr, u, 0) // the driver times out itself
		}
		var err error
		if conns, err = mysql.NewConnector(my); err != nil {
			return nil, fmt.Errorf("lock database: %w", err)
		}
	}
	p.db = sql.OpenDB(connector{Connector: conns, pool: p, u: u})
	p.db.SetMaxOpenConns(size)
	p.db.SetMaxIdleConns(size)
	return p, nil
}

// DB is the pool, for the lock's queries.
func (p *pool) DB() *sql.DB { return p.db }

// Dialect says how to write the pool's queries.
func (p *pool) Dialect() Dialect { return p.dialect }

// ConnectionIDs are the server-side ids (CONNECTION_ID(), pg_backend_pid())
// of every connection the pool opened, in order; some may have closed since.
func (p *pool) ConnectionIDs() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.ids...)
}

// Close closes the pool and every socket it dialed: the server sees each
// connection end and rolls back what it held (a transaction, its row
// locks, GET_LOCK, an advisory lock), even where the lock's code never
// gave its connection back. A crash closes it so.
func (p *pool) Close() {
	p.db.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, conn := range p.sockets {
		conn.Close()
	}
	p.sockets = nil
}

// dial dials a connection of the pool: recorded, so that Close closes it,
// and stopping while the client is paused. A timeout above 0 also bounds
// each read and write.
func (p *pool) dial(ctx context.Context, network, addr string, u user, timeout time.Duration) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.sockets = append(p.sockets, conn)
	p.mu.Unlock()
	if timeout > 0 {
		conn = socket.Timed(conn, timeout)
	}
	return socket.Pausable(conn, u), nil
}

// recordID asks the server the id of conn, a new connection of the pool,
// and records it.
func (p *pool) recordID(ctx context.Context, conn driver.Conn) error {
	id, err := connectionID(ctx, conn, p.dialect.ConnectionID())
	if err != nil {
		return fmt.Errorf("read the connection's id: %w", err)
	}
	p.mu.Lock()
	p.ids = append(p.ids, id)
	p.mu.Unlock()
	return nil
}

// connectionID asks the server for the id of conn with query.
func connectionID(ctx context.Context, conn driver.Conn, query string) (int64, error) {
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return 0, fmt.Errorf("driver connection %T cannot query", conn)
	}
	rows, err := q.QueryContext(ctx, query, nil)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		return 0, err
	}
	switch id := v[0].(type) {
	case int64:
		return id, nil
	case int32:
		return int64(id), nil
	case []byte:
		return strconv.ParseInt(string(id), 10, 64)
	}
	return 0, fmt.Errorf("connection id of type %T", v[0])
}
