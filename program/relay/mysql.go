package relay

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/resp"
	"io"
	"net"
	"strings"
)

// The commands of MariaDB's protocol the relay knows.
const (
	myComQuit             = 0x01
	myComQuery            = 0x03
	myComPing             = 0x0e
	myComStmtPrepare      = 0x16
	myComStmtExecute      = 0x17
	myComStmtSendLongData = 0x18
	myComStmtClose        = 0x19
	myComStmtReset        = 0x1a
)

// myLastPrepared is the statement id of COM_STMT_EXECUTE that means the
// statement prepared last (MariaDB's, for a prepare and execute sent at
// once).
const myLastPrepared = 0xffffffff

// myCursorTypes are the flags of COM_STMT_EXECUTE that open a cursor,
// whose rows come by COM_STMT_FETCH: the relay pipes such a connection.
const myCursorTypes = 0x07

// Capability flags of MariaDB's protocol that change what the relay reads.
const (
	myClientMySQL          = 1 << 0  // set by MySQL's clients and servers, not MariaDB's: no extended flags
	myClientCompress       = 1 << 5  // compressed packets
	myClientProtocol41     = 1 << 9  // the 4.1 protocol, which the relay reads
	myClientSSL            = 1 << 11 // TLS from the next packet on
	myClientDeprecateEOF   = 1 << 24 // an OK packet ends a result set, not an EOF packet
	myClientQueryAttrs     = 1 << 27 // MySQL 8's query attributes in COM_QUERY
	myMariaDBProgress      = 1 << 0  // extended flag: progress reports during a query
	myMariaDBCacheMetadata = 1 << 4  // extended flag: a result set may omit its columns
)

// myStatusMoreResults is the status flag that says another result follows.
const myStatusMoreResults = 0x0008

// myMaxPacket bounds a packet the relay reads, continuations included, as
// the server's max_allowed_packet (1 GB at most) does, so that garbage
// cannot make it allocate without bound.
const myMaxPacket = 1 << 30

// errMyUnread is a reply the relay does not read (LOCAL INFILE): it pipes
// the connection from there.
var errMyUnread = errors.New("a reply the relay does not read")

// myCaps are the capabilities client and server agreed on in the
// handshake.
type myCaps struct {
	flags    uint32 // both sides' flags
	extended uint32 // both sides' MariaDB extended flags; 0 when either is MySQL
}

// serveMySQL relays one MariaDB connection of the program to upConn, as serve
// does Redis's: it passes the handshake and authentication through, then
// runs each statement the program sends through the client's failpoints,
// named by its first word as a Go lock's statements are, with every packet
// of its reply (every result of a multi-statement): a COM_QUERY, or a
// COM_STMT_EXECUTE, named by the text its COM_STMT_PREPARE prepared (the
// prepare counts in no phase: a Go lock's query with arguments, prepared
// and executed by go-sql-driver, counts once too). COM_PING
// and the other commands of prepared statements pass, struck by none. Any
// other command (COM_CHANGE_USER, a cursor…) makes the relay a plain pipe
// for the rest of that connection, striking nothing, as it does after
// Redis's SUBSCRIBE; so do TLS and compression, which it cannot read.
func (r *Relay) serveMySQL(down net.Conn, in *bufio.Reader, upConn net.Conn, out *bufio.Reader) {
	caps, ok := myHandshake(down, in, upConn, out)
	if !ok {
		return
	}
	c := &myConn{r: r, up: upConn, out: out, caps: caps, prepared: map[uint32]string{}}
	for {
		payload, raw, err := readMyPacket(in)
		if err != nil {
			return
		}
		reply, next := c.command(payload, raw)
		if reply != nil {
			if _, err := down.Write(reply); err != nil {
				return
			}
		}
		switch next {
		case myPipe:
			pipe(down, in, upConn, out)
			return
		case myEnd:
			return
		}
	}
}

// What a relayed connection does after a command.
const (
	myNext = iota // read the next command
	myPipe        // pipe the rest of the connection, unread
	myEnd         // close the connection
)

// myConn is one relayed connection after its handshake.
type myConn struct {
	r        *Relay
	up       net.Conn
	out      *bufio.Reader
	caps     myCaps
	prepared map[uint32]string // each prepared statement's text, by its id
	last     uint32            // the id of the last statement prepared
}

// command sends one command, raw, and returns the reply to hand the
// program (nil for none) and what to do next.
func (c *myConn) command(payload, raw []byte) (reply []byte, next int) {
	var cmd byte
	if len(payload) > 0 {
		cmd = payload[0]
	}
	switch {
	case cmd == myComQuit:
		c.up.Write(raw)
		return nil, myEnd
	case cmd == myComQuery && c.caps.flags&myClientQueryAttrs == 0:
		return c.statement(string(payload[1:]), raw)
	case cmd == myComStmtExecute && len(payload) >= 6 && payload[5]&myCursorTypes == 0:
		id := binary.LittleEndian.Uint32(payload[1:])
		if id == myLastPrepared {
			id = c.last
		}
		return c.statement(c.prepared[id], raw)
	case cmd == myComStmtPrepare:
		if _, err := c.up.Write(raw); err != nil {
			return nil, myEnd
		}
		reply, id, err := readMyPrepareReply(c.out, c.caps)
		if err != nil {
			return nil, myEnd
		}
		c.last = myLastPrepared // none, if it failed
		if id != nil {
			c.prepared[*id], c.last = string(payload[1:]), *id
		}
		return reply, myNext
	case cmd == myComStmtClose || cmd == myComStmtSendLongData:
		// No reply.
		if cmd == myComStmtClose && len(payload) >= 5 {
			delete(c.prepared, binary.LittleEndian.Uint32(payload[1:]))
		}
		if _, err := c.up.Write(raw); err != nil {
			return nil, myEnd
		}
		return nil, myNext
	case cmd == myComPing || cmd == myComStmtReset:
		// One OK or error packet.
		if _, err := c.up.Write(raw); err != nil {
			return nil, myEnd
		}
		_, reply, err := readMyPacket(c.out)
		if err != nil {
			return nil, myEnd
		}
		return reply, myNext
	}
	if _, err := c.up.Write(raw); err != nil {
		return nil, myEnd
	}
	return nil, myPipe
}

// statement sends one statement, raw, whose text is text, through the
// failpoints and returns every packet of its reply. A reply that asks for
// what the relay does not read (a LOCAL INFILE) pipes the connection from
// there; a reply that must not be handed on (a crash, a dropped reply, the
// end of the run, a broken connection) ends it.
func (c *myConn) statement(text string, raw []byte) ([]byte, int) {
	var reply []byte
	var sendErr error
	done, unread := false, false
	c.r.learn.Seen(statementFootprint(strings.Fields(text)))
	err := c.r.cmds.Statement(strings.Fields(text), func() (any, error) {
		if _, err := c.up.Write(raw); err != nil {
			sendErr = err
			return nil, err
		}
		var serverErr error
		reply, serverErr, sendErr = readMyReply(c.out, c.caps)
		if errors.Is(sendErr, errMyUnread) {
			unread, sendErr = true, nil
		}
		if sendErr != nil {
			return nil, sendErr
		}
		done, sendErr = true, serverErr
		return myRows(reply), serverErr
	})
	switch {
	case !done || err != sendErr:
		return nil, myEnd
	case unread:
		return reply, myPipe
	}
	return reply, myNext
}

// myRows is the rows a reply of one OK packet says its statement changed
// (affected_rows), or nil for any other reply (a result set, an error).
func myRows(reply []byte) any {
	if len(reply) < 5 || reply[4] != 0x00 {
		return nil
	}
	n, size := myLenenc(reply[5:])
	if size == 0 {
		return nil
	}
	return harness.RowsChanged(n)
}

// readMyPrepareReply reads the reply to a COM_STMT_PREPARE: an error, or
// the statement's id and the definitions of its parameters and columns.
// id is nil for an error.
func readMyPrepareReply(out *bufio.Reader, caps myCaps) (reply []byte, id *uint32, err error) {
	p, reply, err := readMyPacket(out)
	if err != nil {
		return nil, nil, err
	}
	if len(p) > 0 && p[0] == 0xff {
		return reply, nil, nil
	}
	if len(p) < 9 || p[0] != 0x00 {
		return nil, nil, protocolError(fmt.Sprintf("a reply %q to COM_STMT_PREPARE", clip(string(p))))
	}
	stmt := binary.LittleEndian.Uint32(p[1:])
	packets := 0
	// The parameters' definitions, then the columns'.
	for _, n := range []uint16{binary.LittleEndian.Uint16(p[7:]), binary.LittleEndian.Uint16(p[5:])} {
		packets += int(n)
		if n > 0 && caps.flags&myClientDeprecateEOF == 0 {
			packets++
		}
	}
	for range packets {
		_, raw, err := readMyPacket(out)
		if err != nil {
			return nil, nil, err
		}
		reply = append(reply, raw...)
	}
	return reply, &stmt, nil
}

// myHandshake relays the handshake and authentication of a connection
// until the server says OK, and returns the capabilities both sides
// agreed on. It returns false when the connection ended, failed, or became
// a plain pipe (TLS, compression, a protocol before 4.1).
func myHandshake(down net.Conn, in *bufio.Reader, upConn net.Conn, out *bufio.Reader) (myCaps, bool) {
	greeting, raw, err := readMyPacket(out)
	if err != nil {
		return myCaps{}, false
	}
	if _, err := down.Write(raw); err != nil {
		return myCaps{}, false
	}
	server, serverExt, ok := myServerCaps(greeting)
	if !ok {
		return myCaps{}, false // an error, or a greeting the relay does not read
	}
	response, raw, err := readMyPacket(in)
	if err != nil {
		return myCaps{}, false
	}
	if _, err := upConn.Write(raw); err != nil {
		return myCaps{}, false
	}
	client, clientExt := myClientCaps(response)
	caps := myCaps{flags: client & server}
	if caps.flags&myClientMySQL == 0 {
		caps.extended = clientExt & serverExt
	}
	if caps.flags&myClientProtocol41 == 0 || caps.flags&(myClientSSL|myClientCompress) != 0 {
		pipe(down, in, upConn, out) // unreadable from here on
		return myCaps{}, false
	}
	for {
		p, raw, err := readMyPacket(out)
		if err != nil || len(p) == 0 {
			return myCaps{}, false
		}
		if _, err := down.Write(raw); err != nil {
			return myCaps{}, false
		}
		switch {
		case p[0] == 0x00:
			return caps, true
		case p[0] == 0xff:
			return myCaps{}, false
		case len(p) == 2 && p[0] == 0x01 && p[1] == 0x03:
			// caching_sha2_password's fast authentication: OK follows.
			continue
		}
		// An authentication switch or more data: the client answers.
		_, a, err := readMyPacket(in)
		if err != nil {
			return myCaps{}, false
		}
		if _, err := upConn.Write(a); err != nil {
			return myCaps{}, false
		}
	}
}

// myServerCaps reads the capability flags of the server's greeting
// (protocol 10); false for an error packet or another protocol.
func myServerCaps(p []byte) (flags, extended uint32, ok bool) {
	if len(p) == 0 || p[0] != 10 {
		return 0, 0, false
	}
	i := 1
	for i < len(p) && p[i] != 0 {
		i++ // the server's version, NUL-terminated
	}
	i += 1 + 4 + 8 + 1 // NUL, connection id, scramble part 1, filler
	if len(p) < i+2 {
		return 0, 0, false
	}
	flags = uint32(binary.LittleEndian.Uint16(p[i:]))
	i += 2 + 1 + 2 // lower flags, charset, status
	if len(p) < i+2 {
		return flags, 0, true
	}
	flags |= uint32(binary.LittleEndian.Uint16(p[i:])) << 16
	i += 2 + 1 + 6 // upper flags, scramble length, filler
	if flags&myClientMySQL == 0 && len(p) >= i+4 {
		extended = binary.LittleEndian.Uint32(p[i:])
	}
	return flags, extended, true
}

// myClientCaps reads the capability flags of the client's handshake
// response (or TLS request), which begins with them.
func myClientCaps(p []byte) (flags, extended uint32) {
	if len(p) < 4 {
		return 0, 0
	}
	flags = binary.LittleEndian.Uint32(p)
	if flags&myClientMySQL == 0 && len(p) >= 32 {
		extended = binary.LittleEndian.Uint32(p[28:]) // after max packet, charset, 19 bytes of filler
	}
	return flags, extended
}

// readMyReply reads every packet of a COM_QUERY's reply: an OK, an error,
// or a result set, then the next result while the server says more
// follow. serverErr is the server's error, if it answered one.
func readMyReply(out *bufio.Reader, caps myCaps) (reply []byte, serverErr, err error) {
	for {
		p, raw, err := readMyPacket(out)
		if err != nil {
			return reply, nil, err
		}
		reply = append(reply, raw...)
		var status uint16
		switch {
		case len(p) == 0:
			return reply, nil, protocolError("an empty packet in MariaDB's reply")
		case p[0] == 0xff:
			if myProgress(p) && caps.extended&myMariaDBProgress != 0 {
				continue
			}
			return reply, errors.New("server error: " + myErrorText(p)), nil
		case p[0] == 0x00:
			status = myOKStatus(p)
		case p[0] == 0xfb:
			return reply, nil, errMyUnread
		default:
			var rest []byte
			rest, status, serverErr, err = readMyResultSet(out, p, caps)
			reply = append(reply, rest...)
			if err != nil || serverErr != nil {
				return reply, serverErr, err
			}
		}
		if status&myStatusMoreResults == 0 {
			return reply, nil, nil
		}
	}
}

// readMyResultSet reads the rest of a result set whose column count is
// first: its columns, then its rows, up to the packet that ends it, whose
// status it returns.
func readMyResultSet(out *bufio.Reader, first []byte, caps myCaps) (reply []byte, status uint16, serverErr, err error) {
	columns, n := myLenenc(first)
	if n == 0 {
		return nil, 0, nil, protocolError("a result set's column count is not a number")
	}
	packets := columns // column definitions
	if caps.extended&myMariaDBCacheMetadata != 0 && len(first) > n && first[n] == 0 {
		packets = 0 // the client has them already
	}
	if caps.flags&myClientDeprecateEOF == 0 {
		packets++ // the EOF after the columns
	}
	for range packets {
		_, raw, err := readMyPacket(out)
		if err != nil {
			return reply, 0, nil, err
		}
		reply = append(reply, raw...)
	}
	for {
		p, raw, err := readMyPacket(out)
		if err != nil {
			return reply, 0, nil, err
		}
		reply = append(reply, raw...)
		switch {
		case len(p) > 0 && p[0] == 0xff:
			if myProgress(p) && caps.extended&myMariaDBProgress != 0 {
				continue
			}
			return reply, 0, errors.New("server error: " + myErrorText(p)), nil
		case len(p) > 0 && p[0] == 0xfe && caps.flags&myClientDeprecateEOF != 0 && len(p) < 0xffffff:
			return reply, myOKStatus(p), nil, nil
		case len(p) > 0 && p[0] == 0xfe && len(p) < 9:
			if len(p) < 5 {
				return reply, 0, nil, nil
			}
			return reply, binary.LittleEndian.Uint16(p[3:]), nil, nil // after the warnings
		}
	}
}

// myOKStatus is the status flags of an OK packet: after its header, the
// rows it changed and the last insert id.
func myOKStatus(p []byte) uint16 {
	i := 1
	for range 2 {
		_, n := myLenenc(p[i:])
		if n == 0 {
			return 0
		}
		i += n
	}
	if len(p) < i+2 {
		return 0
	}
	return binary.LittleEndian.Uint16(p[i:])
}

// myLenenc reads a length-encoded integer and the bytes it took; 0 bytes
// for none (a NULL, or a packet cut short).
func myLenenc(p []byte) (uint64, int) {
	if len(p) == 0 {
		return 0, 0
	}
	size := map[byte]int{0xfc: 2, 0xfd: 3, 0xfe: 8}[p[0]]
	switch {
	case p[0] < 0xfb:
		return uint64(p[0]), 1
	case size == 0 || len(p) < 1+size:
		return 0, 0
	}
	var b [8]byte
	copy(b[:], p[1:1+size])
	return binary.LittleEndian.Uint64(b[:]), 1 + size
}

// myProgress reports whether an error packet is MariaDB's progress report
// (error code 0xffff), which a long statement sends before its reply.
func myProgress(p []byte) bool { return len(p) >= 3 && p[1] == 0xff && p[2] == 0xff }

// myErrorText is an error packet's code and message.
func myErrorText(p []byte) string {
	if len(p) < 3 {
		return "(no message)"
	}
	code, msg := binary.LittleEndian.Uint16(p[1:]), p[3:]
	if len(msg) >= 6 && msg[0] == '#' {
		msg = msg[6:] // the SQL state
	}
	return fmt.Sprintf("%d %s", code, msg)
}

// readMyPacket reads one packet, and the packets that continue it when it
// fills the 16 MB a packet holds: the payload, and every byte as read.
func readMyPacket(r *bufio.Reader) (payload, raw []byte, err error) {
	for {
		var head [4]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			if raw != nil {
				err = resp.Unexpected(err)
			}
			return nil, nil, err
		}
		n := int(head[0]) | int(head[1])<<8 | int(head[2])<<16
		if len(payload)+n > myMaxPacket {
			return nil, nil, protocolError(fmt.Sprintf("MariaDB packet of more than %d bytes", myMaxPacket))
		}
		start := len(raw)
		raw = append(raw, head[:]...)
		raw = append(raw, make([]byte, n)...)
		if _, err := io.ReadFull(r, raw[start+4:]); err != nil {
			return nil, nil, resp.Unexpected(err)
		}
		payload = append(payload, raw[start+4:]...)
		if n < 0xffffff {
			return payload, raw, nil
		}
	}
}
