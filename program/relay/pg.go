package relay

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
)

// PostgreSQL's startup codes that are not a StartupMessage.
const (
	pgCancelRequest = 80877102
	pgSSLRequest    = 80877103
	pgGSSENCRequest = 80877104
)

// pgMaxMessage bounds a message the relay reads, as the server's own limit
// on a query (1 GB) does, so that garbage cannot make it allocate without
// bound.
const pgMaxMessage = 1 << 30

// servePG relays one PostgreSQL connection of the program to upConn, as serve
// does Redis's: it passes the start-up and authentication through, then
// runs each simple query ('Q') through the client's failpoints, named by
// its first word as a Go lock's statements are, with every message of its
// reply up to ReadyForQuery. The extended query protocol (Parse, Bind,
// Execute: prepared statements) pairs no request with one reply: the relay
// becomes a plain pipe for the rest of that connection, striking nothing,
// as it does after Redis's SUBSCRIBE; so does an encrypted connection.
func (r *Relay) servePG(down net.Conn, in *bufio.Reader, upConn net.Conn, out *bufio.Reader) {
	if !pgStartup(down, in, upConn, out) {
		return
	}
	for {
		typ, raw, err := readPGMessage(in)
		if err != nil {
			return
		}
		if typ != 'Q' {
			// Terminate, or a message of the extended protocol.
			if _, err := upConn.Write(raw); err == nil && typ != 'X' {
				pipe(down, in, upConn, out)
			}
			return
		}
		reply, ok := r.query(raw, upConn, out)
		if !ok {
			return // crashed, dropped, the run ended, or the connection broke
		}
		if _, err := down.Write(reply); err != nil {
			return
		}
	}
}

// query sends one simple query, raw, through the failpoints and returns
// every message of its reply, or false when it must not be handed on.
func (r *Relay) query(raw []byte, upConn net.Conn, out *bufio.Reader) ([]byte, bool) {
	text := string(bytes.TrimRight(raw[5:], "\x00"))
	var reply []byte
	var sendErr error
	done := false
	err := r.cmds.Statement(strings.Fields(text), func() (any, error) {
		if _, err := upConn.Write(raw); err != nil {
			sendErr = err
			return nil, err
		}
		var serverErr error
		for {
			typ, m, err := readPGMessage(out)
			if err != nil {
				sendErr = err
				return nil, err
			}
			reply = append(reply, m...)
			if typ == 'E' && serverErr == nil {
				serverErr = errors.New("server error: " + pgErrorText(m))
			}
			if typ == 'Z' {
				done, sendErr = true, serverErr
				return nil, serverErr
			}
		}
	})
	return reply, done && err == sendErr
}

// pgStartup relays the start-up and authentication of a connection until
// the server is ready for a query. It returns false when the connection
// ended, failed, or became a plain pipe (encryption, a cancel request).
func pgStartup(down net.Conn, in *bufio.Reader, upConn net.Conn, out *bufio.Reader) bool {
	for {
		raw, err := readPGStartup(in)
		if err != nil {
			return false
		}
		if _, err := upConn.Write(raw); err != nil {
			return false
		}
		code := binary.BigEndian.Uint32(raw[4:8])
		if code == pgCancelRequest {
			pipe(down, in, upConn, out)
			return false
		}
		if code != pgSSLRequest && code != pgGSSENCRequest {
			break
		}
		b, err := out.ReadByte()
		if err != nil {
			return false
		}
		if _, err := down.Write([]byte{b}); err != nil {
			return false
		}
		if b != 'N' {
			pipe(down, in, upConn, out) // encrypted from here on: unreadable
			return false
		}
	}
	for {
		typ, m, err := readPGMessage(out)
		if err != nil {
			return false
		}
		if _, err := down.Write(m); err != nil {
			return false
		}
		switch {
		case typ == 'Z':
			return true
		case typ == 'E':
			return false
		case typ == 'R' && len(m) >= 9:
			// Every request but AuthenticationOk (0) and SASLFinal (12)
			// wants one message of the client's in answer.
			if code := binary.BigEndian.Uint32(m[5:9]); code != 0 && code != 12 {
				_, a, err := readPGMessage(in)
				if err != nil {
					return false
				}
				if _, err := upConn.Write(a); err != nil {
					return false
				}
			}
		}
	}
}

// readPGMessage reads one message: its type byte, its length (which counts
// itself) and its body; raw is every byte of it.
func readPGMessage(r *bufio.Reader) (typ byte, raw []byte, err error) {
	head := make([]byte, 5)
	if _, err := io.ReadFull(r, head); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n < 4 || n > pgMaxMessage {
		return 0, nil, protocolError(fmt.Sprintf("PostgreSQL message %q of length %d", head[0], n))
	}
	raw = make([]byte, 1+n)
	copy(raw, head)
	if _, err := io.ReadFull(r, raw[5:]); err != nil {
		return 0, nil, unexpected(err)
	}
	return head[0], raw, nil
}

// readPGStartup reads one start-up message, which has no type byte.
func readPGStartup(r *bufio.Reader) ([]byte, error) {
	head := make([]byte, 4)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(head)
	if n < 8 || n > 10000 {
		return nil, protocolError(fmt.Sprintf("PostgreSQL start-up message of length %d", n))
	}
	raw := make([]byte, n)
	copy(raw, head)
	if _, err := io.ReadFull(r, raw[4:]); err != nil {
		return nil, unexpected(err)
	}
	return raw, nil
}

// pgErrorText is the message field ('M') of an ErrorResponse.
func pgErrorText(m []byte) string {
	for _, f := range bytes.Split(m[5:], []byte{0}) {
		if len(f) > 1 && f[0] == 'M' {
			return string(f[1:])
		}
	}
	return "(no message)"
}
