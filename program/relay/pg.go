package relay

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/resp"
	"io"
	"net"
	"strconv"
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
// runs each statement through the client's failpoints, named by its first
// word as a Go lock's statements are, with every message of its reply up
// to ReadyForQuery: a simple query ('Q'), or a batch of the extended
// protocol up to its Sync (Parse, Bind, Describe, Execute, Close), as
// libpq's PQexecParams (PHP's PDO), pgx, psycopg 3 and JDBC send them,
// named by the query its Execute runs (a statement prepared earlier by
// name, or the batch's own Parse). A batch that executes nothing (a
// prepare: Parse, Describe, Sync) counts in no phase, as MariaDB's
// COM_STMT_PREPARE does. A Flush, which asks for replies before the Sync,
// a COPY, a function call or an encrypted connection make the relay a
// plain pipe for the rest of that connection, striking nothing, as it does
// after Redis's SUBSCRIBE. The protocol:
// https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-EXT-QUERY
func (r *Relay) servePG(down net.Conn, in *bufio.Reader, upConn net.Conn, out *bufio.Reader) {
	if !pgStartup(down, in, upConn, out) {
		return
	}
	c := &pgConn{r: r, up: upConn, out: out, stmts: map[string]string{}, portals: map[string]string{}}
	for {
		typ, raw, err := readPGMessage(in)
		if err != nil {
			return
		}
		var text string
		struck := typ == 'Q'
		if struck {
			text = string(bytes.TrimRight(raw[5:], "\x00"))
		} else if pgExtended(typ) {
			raw, text, struck, typ, err = c.batch(typ, raw, in)
			if err != nil {
				return
			}
		}
		if typ != 'Q' && typ != 'S' {
			// Terminate, or what the relay does not read.
			if _, err := upConn.Write(raw); err == nil && typ != 'X' {
				pipe(down, in, upConn, out)
			}
			return
		}
		reply, ok, copyIn := c.exchange(strings.Fields(text), raw, struck)
		if !ok {
			return // crashed, dropped, the run ended, or the connection broke
		}
		if _, err := down.Write(reply); err != nil {
			return
		}
		if copyIn {
			pipe(down, in, upConn, out)
			return
		}
	}
}

// pgConn is one relayed PostgreSQL connection after its start-up.
type pgConn struct {
	r       *Relay
	up      net.Conn
	out     *bufio.Reader
	stmts   map[string]string // each prepared statement's query, by name ("" is the unnamed one)
	portals map[string]string // each portal's query, by name
}

// pgExtended reports whether a message of type typ belongs in a batch of
// the extended protocol that a Sync ends.
func pgExtended(typ byte) bool { return strings.IndexByte("PBDECS", typ) >= 0 }

// batch reads the messages of the extended protocol that follow first, raw,
// up to its Sync, and returns all of them, the query of its first Execute,
// whether there is one, and the type of the message that ended it: 'S',
// or another one (a Flush) after which the relay pipes.
func (c *pgConn) batch(first byte, raw []byte, in *bufio.Reader) (all []byte, text string, execute bool, last byte, err error) {
	typ, m := first, raw
	for {
		all = append(all, m...)
		name, rest := pgString(m[5:])
		switch typ {
		case 'P':
			c.stmts[name], _ = pgString(rest)
		case 'B':
			c.portals[name] = c.stmts[pgFirst(rest)]
		case 'C':
			if len(m) > 5 && m[5] == 'S' {
				delete(c.stmts, pgFirst(m[6:]))
			} else if len(m) > 5 {
				delete(c.portals, pgFirst(m[6:]))
			}
		case 'E':
			if !execute {
				text, execute = c.portals[name], true
			}
		}
		if !pgExtended(typ) || typ == 'S' {
			return all, text, execute, typ, nil
		}
		if typ, m, err = readPGMessage(in); err != nil {
			return nil, "", false, 0, err
		}
	}
}

// pgString splits a NUL-terminated string off the front of b.
func pgString(b []byte) (string, []byte) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return string(b), nil
	}
	return string(b[:i]), b[i+1:]
}

// pgFirst is the NUL-terminated string at the front of b.
func pgFirst(b []byte) string {
	s, _ := pgString(b)
	return s
}

// exchange sends one request, raw (a simple query, or a batch up to its
// Sync) with words words, through the failpoints when struck says so (else
// past them, counted in no phase) and returns every message of its reply,
// or false when it must not be handed on. copyIn says the server waits
// for the program's rows (COPY FROM STDIN: CopyInResponse, or
// CopyBothResponse), which the relay does not read: it hands on the reply
// so far, and pipes.
func (c *pgConn) exchange(words []string, raw []byte, struck bool) (reply []byte, ok, copyIn bool) {
	var sendErr error
	done := false
	send := func() (any, error) {
		if _, err := c.up.Write(raw); err != nil {
			sendErr = err
			return nil, err
		}
		var serverErr error
		var rows any
		completed := 0
		for {
			typ, m, err := readPGMessage(c.out)
			if err != nil {
				sendErr = err
				return nil, err
			}
			reply = append(reply, m...)
			if typ == 'C' {
				// One statement's tag says its rows; a batch's, whose
				// request is named by its first, say nothing of it.
				completed++
				rows = pgRows(m)
			}
			if typ == 'E' && serverErr == nil {
				serverErr = errors.New("server error: " + pgErrorText(m))
			}
			if typ == 'Z' || typ == 'G' || typ == 'W' {
				done, copyIn, sendErr = true, typ != 'Z', serverErr
				if completed != 1 {
					rows = nil
				}
				return rows, serverErr
			}
		}
	}
	var err error
	if struck {
		c.r.learn.Seen(statementFootprint(words))
		err = c.r.cmds.Statement(words, send)
	} else {
		_, err = send()
	}
	return reply, done && err == sendErr, copyIn
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

// pgRows is the rows a CommandComplete message (raw, its type byte and
// length first) says its statement changed: the last word of a DELETE's,
// UPDATE's or INSERT's tag ("DELETE 1", "INSERT 0 1"); nil for another's.
func pgRows(raw []byte) any {
	if len(raw) < 6 {
		return nil
	}
	words := strings.Fields(strings.TrimRight(string(raw[5:]), "\x00"))
	if len(words) < 2 || (words[0] != "DELETE" && words[0] != "UPDATE" && words[0] != "INSERT") {
		return nil
	}
	n, err := strconv.ParseInt(words[len(words)-1], 10, 64)
	if err != nil {
		return nil
	}
	return harness.RowsChanged(n)
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
		return 0, nil, resp.Unexpected(err)
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
		return nil, resp.Unexpected(err)
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
