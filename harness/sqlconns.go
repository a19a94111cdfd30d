package harness

import (
	"context"
	"database/sql/driver"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
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

// recordID asks the server the id of a new connection of the client's SQL
// pool with query (its dialect's ConnectionID) and records it.
func (s *sqlConns) recordID(ctx context.Context, conn driver.Conn, query string) error {
	id, err := connectionID(ctx, conn, query)
	if err != nil {
		return fmt.Errorf("read the connection's id: %w", err)
	}
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	return nil
}

// dialSQL dials a connection of the client's SQL pool: recorded, so that a
// crash closes it as a dead process's socket closes (the server then ends
// its session and what it held), and stopping while the client is paused.
// A timeout above 0 also bounds each read and write (timedConn), for a
// driver that has no timeout of its own.
func (c *Client) dialSQL(ctx context.Context, network, addr string, timeout time.Duration) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	conn = c.sqlConns.socket(conn)
	if timeout > 0 {
		conn = &timedConn{Conn: conn, timeout: timeout}
	}
	return pausable{Conn: conn, c: c}, nil
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
