package sqldb

import (
	"context"
	"database/sql"
	"errors"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// Conn is a client's handle to the lock table's server: a pool of two
// connections through the client's link, each statement passing the
// client's failpoints. A service's shared pool (OpenSharedPool) is one
// too, shared by the clients that are its request threads.
type Conn struct{ p *pool }

// Of is client c's handle to the lock table's server, or nil on a
// topology without one.
func Of(c *harness.Client) *Conn {
	conn, _ := c.Handle().(*Conn)
	return conn
}

// DB is the pool, for the lock's queries.
func (c *Conn) DB() *sql.DB { return c.p.DB() }

// Dialect says how to write the pool's queries: MySQL on the mariadb
// topology, Pgx on postgres.
func (c *Conn) Dialect() Dialect { return c.p.Dialect() }

// ConnectionIDs are the server-side ids (CONNECTION_ID(), pg_backend_pid())
// of every connection the pool opened, in order; some may have closed
// since (harness.Client.SQLConnections).
func (c *Conn) ConnectionIDs() []int64 { return c.p.ConnectionIDs() }

// Close closes the pool and every socket it dialled: the server sees each
// connection end and rolls back what it held.
func (c *Conn) Close() error {
	c.p.Close()
	return nil
}

// errUnbound is the Dial of a Service the harness did not bind to its
// deployment: the server's DSN (its user, its database) is the
// deployment's.
var errUnbound = errors.New("sqldb: the service dials only once bound to its deployment (harness.Bound)")

// Dial fails: a client is dialled by the service bound to its deployment
// (Bind).
func (MariaDB) Dial(*harness.Client, []string) (harness.Handle, error) { return nil, errUnbound }

// Dial fails: a client is dialled by the service bound to its deployment
// (Bind).
func (Postgres) Dial(*harness.Client, []string) (harness.Handle, error) { return nil, errUnbound }

// Env is nil until the service is bound to its deployment (Bind).
func (MariaDB) Env(*harness.Client, []string) []string { return nil }

// Env is nil until the service is bound to its deployment (Bind).
func (Postgres) Env(*harness.Client, []string) []string { return nil }

// Bind is the service dialling the server of d (harness.Bound).
func (MariaDB) Bind(d cluster.Deployment) harness.Dialer { return bind(d) }

// Bind is the service dialling the server of d (harness.Bound).
func (Postgres) Bind(d cluster.Deployment) harness.Dialer { return bind(d) }

// bind is the dialer of d, or one that fails to dial when d is no SQL
// deployment.
func bind(d cluster.Deployment) harness.Dialer {
	sd, _ := d.(*deployment)
	return dialer{d: sd}
}

// dialer dials the clients of one deployment.
type dialer struct{ d *deployment }

// config is the DSN of the server dialled at addr, the client's link,
// with every timeout the client's.
func (r dialer) config(c *harness.Client, addr string) (dialConfig, error) {
	if r.d == nil {
		return dialConfig{}, errors.New("sqldb: the cluster runs no SQL lock service")
	}
	cfg, err := parseDSN(r.d.dialect, r.d.db.DSN(), c.Timeout())
	if err != nil {
		return dialConfig{}, err
	}
	return cfg.Via(addr)
}

// Dial opens c's pool of two connections to the server through addrs[0],
// its link.
func (r dialer) Dial(c *harness.Client, addrs []string) (harness.Handle, error) {
	cfg, err := r.config(c, addrs[0])
	if err != nil {
		return nil, err
	}
	p, err := openPool(cfg, owner{c}, 2)
	if err != nil {
		return nil, err
	}
	return &Conn{p: p}, nil
}

// Env gives a lock program LOCKLAB_MYSQL or LOCKLAB_POSTGRES, the server's
// URL through the client's link.
func (r dialer) Env(c *harness.Client, addrs []string) []string {
	e := r.Endpoints(c, addrs)
	if e.Postgres != "" {
		return []string{"LOCKLAB_POSTGRES=" + e.Postgres}
	}
	return []string{"LOCKLAB_MYSQL=" + e.MySQL}
}

// Endpoints are the server's URL through the client's link, which a lock
// program gets and package program's relay rewrites (harness.Endpointed).
func (r dialer) Endpoints(c *harness.Client, addrs []string) harness.Endpoints {
	cfg, err := r.config(c, addrs[0])
	switch {
	case err != nil:
		return harness.Endpoints{}
	case cfg.Dialect() == Pgx:
		return harness.Endpoints{Postgres: cfg.URL()}
	}
	return harness.Endpoints{MySQL: cfg.URL()}
}

// owner is the client as its pool's connections see it (user).
type owner struct{ c *harness.Client }

func (o owner) WaitResumed(ctx context.Context) error { return o.c.Gate().WaitResumed(ctx) }

func (o owner) Statement(ctx context.Context, query string, send func() error) error {
	return o.c.Statement(ctx, query, send)
}

func (o owner) StatementRows(ctx context.Context, query string, send func() (int64, error)) error {
	return o.c.StatementRows(ctx, query, send)
}

func (o owner) EndTx(ctx context.Context, query string, send func() error) error {
	return o.c.EndTx(ctx, query, send)
}
