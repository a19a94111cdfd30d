package harness

import (
	"context"
	"database/sql"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/locklab/locklab/cluster"
)

// SQLDialect is how SQL() wants its queries written: cluster.MySQL on the
// mariadb topology, cluster.Pgx on postgres; "" when the client has no
// lock table's server.
func (c *Client) SQLDialect() cluster.Dialect {
	switch {
	case c.sql == nil:
		return ""
	case isPgx(c.sql):
		return cluster.Pgx
	}
	return cluster.MySQL
}

// isPgx reports whether db is a pool of pgx's database/sql driver.
func isPgx(db *sql.DB) bool {
	_, ok := db.Driver().(*stdlib.Driver)
	return ok
}

// openPG is openSQL for PostgreSQL: the client's pool on the lock table's
// server, whose connections stop while the client is paused. pgx has no
// read or write timeout, only the caller's context, so each connection
// gives up a read or a write after timeout (timedConn), as the MariaDB
// driver's ReadTimeout and WriteTimeout do: a black-holed link then
// surfaces as an error, not a hang.
func (c *Client) openPG(cfg *pgx.ConnConfig, timeout time.Duration) *sql.DB {
	cfg = cfg.Copy()
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return c.dialSQL(ctx, network, addr, timeout)
	}
	db := sql.OpenDB(sqlConnector{Connector: stdlib.GetConnector(*cfg), c: c, dialect: cluster.Pgx})
	db.SetMaxOpenConns(2)
	return db
}

// pgURL is cfg as a postgres:// URL, for a lock program: the server
// through the client's link, its user and database, without TLS.
func pgURL(cfg *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", User: url.User(cfg.User), Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))),
		Path: "/" + cfg.Database, RawQuery: "sslmode=disable"}
	return u.String()
}

// timedConn bounds each Read and Write by timeout, and by the deadline
// its user set, whichever comes first. pgx sets a deadline in the past
// to end a read when the caller's context ends; taking mu around both
// keeps such a deadline from being overwritten by a later Read's own.
type timedConn struct {
	net.Conn
	timeout time.Duration

	mu       sync.Mutex
	deadline time.Time // the user's; zero: none
}

// SetDeadline records t as the user's deadline and sets it.
func (t *timedConn) SetDeadline(d time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.deadline = d
	return t.Conn.SetDeadline(d)
}

// limit is the deadline of an operation starting now.
func (t *timedConn) limit() time.Time {
	limit := time.Now().Add(t.timeout)
	if !t.deadline.IsZero() && t.deadline.Before(limit) {
		return t.deadline
	}
	return limit
}

func (t *timedConn) Read(b []byte) (int, error) {
	t.mu.Lock()
	err := t.Conn.SetReadDeadline(t.limit())
	t.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return t.Conn.Read(b)
}

func (t *timedConn) Write(b []byte) (int, error) {
	t.mu.Lock()
	err := t.Conn.SetWriteDeadline(t.limit())
	t.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return t.Conn.Write(b)
}
