package harness

import (
	"context"
	"database/sql"
	"strings"

	"github.com/locklab/locklab/cluster"
)

// The harness cannot read from an SQL statement whether it took the lock,
// as it reads a Redis command's reply, so AfterTook never strikes on SQL.

// SQL is the client's pool on the lock table's server (cluster.LockTable),
// through its own link, on the mariadb and postgres topologies; nil on the
// others. A crash closes it, so the server sees the client's connections
// end. SQLDialect says how to write its queries.
func (c *Client) SQL() *sql.DB {
	if c.pool == nil {
		return nil
	}
	return c.pool.DB()
}

// SQLDialect is how SQL() wants its queries written: cluster.MySQL on the
// mariadb topology, cluster.Pgx on postgres; "" when the client has no
// lock table's server.
func (c *Client) SQLDialect() cluster.Dialect {
	if c.pool == nil {
		return ""
	}
	return c.pool.Dialect()
}

// SQLConnections are the server-side ids (CONNECTION_ID(),
// pg_backend_pid()) of every connection the client's SQL pool opened, in
// order; some may have closed since. Nil but on the SQL topologies.
func (c *Client) SQLConnections() []int64 {
	if c.pool == nil {
		return nil
	}
	return c.pool.ConnectionIDs()
}

// owner is the client as its connections see it (sqlpool.Client,
// socket.Gate).
type owner struct{ c *Client }

func (o owner) WaitResumed(ctx context.Context) error { return o.c.waitResumed(ctx) }

func (o owner) Statement(ctx context.Context, query string, send func() error) error {
	return o.c.statement(ctx, o.c.phaseOf(ctx), query, send)
}

func (o owner) EndTx(ctx context.Context, query string, send func() error) error {
	return o.c.statement(ctx, o.c.phase.Load(), query, send)
}

// statement sends one statement of the lock in phase run pr, named by its
// first word, through the failpoints armed on the lock's commands; the
// client's own statements (the inventory's, a probe's), in no phase, are
// sent as they are.
func (c *Client) statement(ctx context.Context, pr *phaseRun, query string, send func() error) error {
	if pr == nil {
		return send()
	}
	words := strings.Fields(query)
	if len(words) == 0 {
		return send()
	}
	x := &exchange{h: c.history}
	return c.strike(ctx, pr, -1, strings.ToUpper(words[0]), []sentCommand{{args: words}}, x, x.wrap(send))
}
