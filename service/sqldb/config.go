package sqldb

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// dialConfig is how a client dials the lock table's server: the driver's own
// configuration for the server's dialect.
type dialConfig struct {
	mysql   *mysql.Config   // on MariaDB
	pg      *pgx.ConnConfig // on PostgreSQL
	timeout time.Duration
}

// parseDSN reads the server's DSN for dialect, with every timeout set to
// timeout, so that a cut or a black hole surfaces as an error, as a Redis
// client's read timeout does.
func parseDSN(dialect Dialect, dsn string, timeout time.Duration) (dialConfig, error) {
	if dialect == Pgx {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return dialConfig{}, fmt.Errorf("lock database: %w", err)
		}
		// pgx has no read timeout of its own: Open bounds each read and
		// write of a connection by timeout instead.
		cfg.ConnectTimeout = timeout
		return dialConfig{pg: cfg, timeout: timeout}, nil
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return dialConfig{}, fmt.Errorf("lock database: %w", err)
	}
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = timeout, timeout, timeout
	// An UPDATE that matches a row reports it even when nothing changed.
	cfg.ClientFoundRows = true
	// The driver logs a connection that broke under a fault to stderr; the
	// lock gets the error all the same, and the history records it.
	cfg.Logger = &mysql.NopLogger{}
	// Arguments are written into the statement, so that a statement with
	// arguments is one exchange (struck once), not a prepare, an execute
	// and a close.
	cfg.InterpolateParams = true
	return dialConfig{mysql: cfg, timeout: timeout}, nil
}

// Dialect is the server's SQL dialect.
func (c dialConfig) Dialect() Dialect {
	if c.pg != nil {
		return Pgx
	}
	return MySQL
}

// Addr is the host:port the config dials.
func (c dialConfig) Addr() string {
	if c.pg != nil {
		return net.JoinHostPort(c.pg.Host, strconv.Itoa(int(c.pg.Port)))
	}
	return c.mysql.Addr
}

// Via is the config dialing addr, the client's link to the server, in
// place of the server's own address.
func (c dialConfig) Via(addr string) (dialConfig, error) {
	if c.pg == nil {
		cfg := c.mysql.Clone()
		cfg.Addr = addr
		return dialConfig{mysql: cfg, timeout: c.timeout}, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return dialConfig{}, fmt.Errorf("lock database: %w", err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return dialConfig{}, fmt.Errorf("lock database: port of %s: %w", addr, err)
	}
	cfg := c.pg.Copy()
	cfg.Host, cfg.Port = host, uint16(p)
	return dialConfig{pg: cfg, timeout: c.timeout}, nil
}

// URL is the server as a URL most languages' clients take, for a lock
// program: mysql://USER[:PASSWORD]@HOST:PORT/locklab, or a postgres:// URL
// with its user and database, without TLS.
func (c dialConfig) URL() string {
	if c.pg != nil {
		u := url.URL{Scheme: "postgres", User: url.User(c.pg.User), Host: c.Addr(),
			Path: "/" + c.pg.Database, RawQuery: "sslmode=disable"}
		return u.String()
	}
	u := url.URL{Scheme: "mysql", Host: c.mysql.Addr, Path: "/locklab", User: url.User(c.mysql.User)}
	if c.mysql.Passwd != "" {
		u.User = url.UserPassword(c.mysql.User, c.mysql.Passwd)
	}
	return u.String()
}
