package relay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/resp"
)

// mcBinaryMagic starts every request of memcached's binary protocol, which
// the relay does not read.
const mcBinaryMagic = 0x80

// mcMaxLine bounds a line the relay reads: memcached takes a get of many
// keys on one line, so it is longer than Redis's inline limit.
const mcMaxLine = 1 << 20

// mcMaxData bounds a data block's byte count, as Redis bounds a bulk
// string, so that garbage cannot make the relay allocate without bound.
const mcMaxData = 512 << 20

// mcLength parses a data block's byte count.
func mcLength(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > mcMaxData {
		return 0, protocolError(fmt.Sprintf("bad length %q", s))
	}
	return n, nil
}

// mcSync is the meta no-op the relay sends after a request that answers
// nothing when it succeeds (noreply, a meta command's q flag): the
// server's MN marks where that request's reply, if any, ends.
const mcSync = "mn\r\n"

// mcReply is how the reply of a request ends.
type mcReply int

const (
	mcLine   mcReply = iota // one line, and its data block when it is a meta VA
	mcEnd                   // VALUE items or STAT lines, up to END
	mcQuiet                 // maybe nothing (noreply, q): up to the MN of mcSync
	mcStream                // no reply that pairs with it (watch, quit): the relay pipes
)

// mcRequest is one request of memcached's text protocol as read.
type mcRequest struct {
	words []string // the words of its line, the verb first
	raw   []byte   // every byte of it, its data block included, as sent
	reply mcReply
	// setup says the request is the connection's upkeep, which a Go lock
	// never sends (version, a no-op): it passes, struck by nothing, as
	// Redis's PING counts in no phase.
	setup bool
}

// serveMemcached relays one memcached connection of the program to upConn,
// as serve does Redis's: it reads each request of the text protocol (its
// line, and the data block of a storage command: set, add, replace,
// append, prepend, cas, ms) and every line of its reply (a get's VALUE
// items up to END, a meta VA's data block), and runs it through the
// client's failpoints named by its verb, ADD or CAS, as the Go handle
// names its requests (memcached.Conn). A request that answers nothing when
// it succeeds (noreply, a meta command's q flag) is followed by a meta
// no-op of the relay's own, so that whatever the server answers to it (an
// error) is its reply and never the next request's. The binary protocol,
// and requests whose replies pair with nothing (watch, the LRU crawler's
// dumps, quit), make the relay a plain pipe for the rest of the
// connection, striking nothing, as it does after Redis's SUBSCRIBE.
func (r *Relay) serveMemcached(down net.Conn, in *bufio.Reader, upConn net.Conn, out *bufio.Reader) {
	if b, err := in.Peek(1); err != nil || b[0] == mcBinaryMagic {
		if err == nil {
			pipe(down, in, upConn, out)
		}
		return
	}
	for {
		req, err := readMCRequest(in)
		if err != nil {
			var perr protocolError
			if errors.As(err, &perr) {
				fmt.Fprintf(down, "CLIENT_ERROR %s (locklab relay)\r\n", perr)
			}
			return
		}
		if req.reply == mcStream {
			if _, err := upConn.Write(req.raw); err == nil {
				pipe(down, in, upConn, out)
			}
			return
		}
		reply, ok := r.mcRequest(req, upConn, out)
		if !ok {
			return // crashed, dropped, the run ended, or the connection broke
		}
		if _, err := down.Write(reply); err != nil {
			return
		}
	}
}

// mcRequest sends one request through the failpoints (a setup request past
// them, as the MariaDB relay's COM_PING) and returns its reply, or false
// when it must not be handed on. It passes harness.Relay.Statement, which
// names a request by its first word and counts it on no lock node, as the
// Go handle's requests pass Client.Request: the Redis relay's Command
// would read its words as a Redis command's and watch a Redis key.
func (r *Relay) mcRequest(req mcRequest, upConn net.Conn, out *bufio.Reader) ([]byte, bool) {
	var reply []byte
	var sendErr error
	send := func() (any, error) {
		raw := req.raw
		if req.reply == mcQuiet {
			raw = append(raw[:len(raw):len(raw)], mcSync...)
		}
		if _, err := upConn.Write(raw); err != nil {
			sendErr = err
			return nil, err
		}
		var serverErr error
		reply, serverErr, sendErr = readMCReply(out, req.reply)
		if sendErr != nil {
			return nil, sendErr
		}
		sendErr = serverErr
		return nil, serverErr
	}
	if req.setup {
		_, err := send()
		return reply, err == sendErr && (err == nil || isMCServerError(err))
	}
	r.learn.Seen(footprint.Memcached(req.words))
	err := r.cmds.Statement(req.words, send)
	return reply, err == sendErr && (err == nil || isMCServerError(err))
}

// mcServerError is the server's error reply (ERROR, CLIENT_ERROR …,
// SERVER_ERROR …): it answered, with an error.
type mcServerError string

func (e mcServerError) Error() string { return "memcached: " + string(e) }

func isMCServerError(err error) bool {
	var e mcServerError
	return errors.As(err, &e)
}

// readMCRequest reads one request: its line and, for a storage command,
// its data block. A storage line memcached would refuse (too few words)
// has no data block, as the server reads none; a byte count that is not
// a number, or a data block that does not end with CRLF, is a protocol
// error, after which the server itself would read the data as a command.
func readMCRequest(in *bufio.Reader) (mcRequest, error) {
	line, err := resp.ReadLine(in, mcMaxLine)
	if err != nil {
		return mcRequest{}, err
	}
	req := mcRequest{words: strings.Fields(string(line)), raw: line}
	if len(req.words) == 0 {
		// The server answers ERROR to an empty line.
		req.setup = true
		return req, nil
	}
	verb := req.words[0]
	data := -1 // the index of the data block's byte count among the words
	switch verb {
	case "set", "add", "replace", "append", "prepend", "cas":
		if len(req.words) >= 5 {
			data = 4
		}
		req.reply = quietIf(lastIs(req.words, "noreply"))
	case "ms":
		if len(req.words) >= 3 {
			data = 2
		}
		req.reply = quietIf(hasFlag(req.words, 3, "q"))
	case "mg", "md", "ma":
		req.reply = quietIf(hasFlag(req.words, 2, "q"))
	case "delete", "incr", "decr", "touch", "flush_all", "verbosity":
		req.reply = quietIf(lastIs(req.words, "noreply"))
	case "get", "gets", "gat", "gats":
		req.reply = mcEnd
	case "stats":
		// Every stats reply ends with END but a reset's and a detail
		// switch's, one line.
		if len(req.words) == 1 || (req.words[1] != "reset" && !(req.words[1] == "detail" && len(req.words) > 2 && req.words[2] != "dump")) {
			req.reply = mcEnd
		}
		req.setup = true
	case "version", "mn", "me":
		req.setup = true
	case "watch", "lru_crawler", "quit", "shutdown":
		req.reply = mcStream
	}
	if data < 0 {
		return req, nil
	}
	n, err := mcLength(req.words[data])
	if err != nil || n < 0 {
		return mcRequest{}, protocolError(fmt.Sprintf("bad data length %q", req.words[data]))
	}
	block := make([]byte, n+2)
	if _, err := io.ReadFull(in, block); err != nil {
		return mcRequest{}, resp.Unexpected(err)
	}
	if block[n] != '\r' || block[n+1] != '\n' {
		return mcRequest{}, protocolError("bad data chunk: it does not end with CRLF after its length")
	}
	req.raw = append(req.raw, block...)
	return req, nil
}

// quietIf is mcQuiet when a request answers nothing on success, else mcLine.
func quietIf(quiet bool) mcReply {
	if quiet {
		return mcQuiet
	}
	return mcLine
}

// lastIs reports whether the last of words is w.
func lastIs(words []string, w string) bool { return len(words) > 1 && words[len(words)-1] == w }

// hasFlag reports whether the meta command words has flag f, a word of
// its own among its flags, which start at words[from].
func hasFlag(words []string, from int, f string) bool {
	for i := from; i < len(words); i++ {
		if words[i] == f {
			return true
		}
	}
	return false
}

// readMCReply reads the reply of a request whose reply ends as kind says.
// serverErr is the first error line of it; err is what broke the reading.
// The MN that ends an mcQuiet reply answers the relay's own no-op, and is
// not part of it.
func readMCReply(out *bufio.Reader, kind mcReply) (reply []byte, serverErr, err error) {
	for {
		raw, word, err := readMCUnit(out)
		if err != nil {
			return nil, nil, err
		}
		isErr := word == "ERROR" || word == "CLIENT_ERROR" || word == "SERVER_ERROR"
		if isErr && serverErr == nil {
			serverErr = mcServerError(strings.TrimRight(string(raw), "\r\n"))
		}
		if kind == mcQuiet && word == "MN" {
			return reply, serverErr, nil
		}
		reply = append(reply, raw...)
		if kind == mcLine || (kind == mcEnd && (word == "END" || isErr)) {
			return reply, serverErr, nil
		}
	}
}

// readMCUnit reads one line of a reply and, for an item (a get's VALUE, a
// meta command's VA), its data block; word is the line's first word.
func readMCUnit(out *bufio.Reader) (raw []byte, word string, err error) {
	line, err := resp.ReadLine(out, mcMaxLine)
	if err != nil {
		return nil, "", err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, "", protocolError(fmt.Sprintf("reply line %q does not end with CRLF", clip(string(line))))
	}
	words := strings.Fields(string(line))
	if len(words) == 0 {
		return nil, "", protocolError("an empty reply line")
	}
	size := ""
	switch {
	case words[0] == "VALUE" && len(words) >= 4:
		size = words[3]
	case words[0] == "VA" && len(words) >= 2:
		size = words[1]
	default:
		return line, words[0], nil
	}
	n, err := mcLength(size)
	if err != nil || n < 0 {
		return nil, "", protocolError(fmt.Sprintf("bad item length %q", size))
	}
	raw = append(line, make([]byte, n+2)...)
	if _, err := io.ReadFull(out, raw[len(line):]); err != nil {
		return nil, "", resp.Unexpected(err)
	}
	if raw[len(raw)-2] != '\r' || raw[len(raw)-1] != '\n' {
		return nil, "", protocolError("an item's data does not end with CRLF")
	}
	return raw, words[0], nil
}
