package harness

import (
	"context"
	"database/sql/driver"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/locklab/locklab/cluster"
)

// sqlConns are the connections a client opened to the lock table's server:
// their server-side ids, which a fault needs to kill them there (KILL
// CONNECTION), and their sockets, which a crash closes as the operating
// system closes a dead process's.
type sqlConns struct {
	mu      sync.Mutex
	ids     []int64
	sockets []net.Conn
}

// socket records a new socket and returns it.
func (s *sqlConns) socket(conn net.Conn) net.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sockets = append(s.sockets, conn)
	return conn
}

// closeSockets closes every socket: the server sees each connection end
// and rolls back what it held (a transaction, its row locks, GET_LOCK),
// even where the client's code never gives its connection back.
func (s *sqlConns) closeSockets() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, conn := range s.sockets {
		conn.Close()
	}
	s.sockets = nil
}

// SQLConnections are the server-side ids (CONNECTION_ID(), pg_backend_pid()) of every
// connection the client's SQL pool opened, in order; some may have closed
// since. Nil but on the SQL topology.
func (c *Client) SQLConnections() []int64 {
	c.sqlConns.mu.Lock()
	defer c.sqlConns.mu.Unlock()
	return append([]int64(nil), c.sqlConns.ids...)
}

// trackConnections wraps the connector of the client's SQL pool so that
// each new connection asks the server its id once and the client records
// it.
func (c *Client) trackConnections(connector driver.Connector, d cluster.Dialect) driver.Connector {
	return idConnector{Connector: connector, conns: &c.sqlConns, query: d.ConnectionID()}
}

// idConnector records the server-side id of each connection it opens.
type idConnector struct {
	driver.Connector
	conns *sqlConns
	query string // asks the server the connection's id
}

func (t idConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := t.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	id, err := connectionID(ctx, conn, t.query)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("read the connection's id: %w", err)
	}
	t.conns.mu.Lock()
	t.conns.ids = append(t.conns.ids, id)
	t.conns.mu.Unlock()
	return conn, nil
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
