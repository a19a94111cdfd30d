// Package socket wraps a simulated client's sockets so that they behave as
// a real process's do: a stopped process neither sends nor reads (Pausable),
// and a client library with no read timeout of its own still gives up on a
// silent server (Timed).
package socket

import (
	"context"
	"net"
	"sync"
	"time"
)

// Gate is the client a socket belongs to.
type Gate interface {
	// WaitResumed blocks while the client is paused, and fails once it
	// crashed.
	WaitResumed(ctx context.Context) error
}

// Pausable is conn stopping while g is paused: nothing is sent, and a
// reply that arrives is read once g resumes.
func Pausable(conn net.Conn, g Gate) net.Conn { return pausable{Conn: conn, g: g} }

type pausable struct {
	net.Conn
	g Gate
}

func (p pausable) Read(b []byte) (int, error) {
	n, err := p.Conn.Read(b)
	if werr := p.g.WaitResumed(context.Background()); werr != nil && err == nil {
		err = werr
	}
	return n, err
}

func (p pausable) Write(b []byte) (int, error) {
	if err := p.g.WaitResumed(context.Background()); err != nil {
		return 0, err
	}
	return p.Conn.Write(b)
}

// Timed is conn with each Read and Write bounded by timeout, and by the
// deadline its user set, whichever comes first.
func Timed(conn net.Conn, timeout time.Duration) net.Conn {
	return &timed{Conn: conn, timeout: timeout}
}

// timed takes mu around both its own deadlines and its user's: pgx sets a
// deadline in the past to end a read when the caller's context ends, and a
// later Read's own deadline must not overwrite it.
type timed struct {
	net.Conn
	timeout time.Duration

	mu       sync.Mutex
	deadline time.Time // the user's; zero: none
}

// SetDeadline records d as the user's deadline and sets it.
func (t *timed) SetDeadline(d time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.deadline = d
	return t.Conn.SetDeadline(d)
}

// limit is the deadline of an operation starting now.
func (t *timed) limit() time.Time {
	limit := time.Now().Add(t.timeout)
	if !t.deadline.IsZero() && t.deadline.Before(limit) {
		return t.deadline
	}
	return limit
}

func (t *timed) Read(b []byte) (int, error) {
	t.mu.Lock()
	err := t.Conn.SetReadDeadline(t.limit())
	t.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return t.Conn.Read(b)
}

func (t *timed) Write(b []byte) (int, error) {
	t.mu.Lock()
	err := t.Conn.SetWriteDeadline(t.limit())
	t.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return t.Conn.Write(b)
}
