// Package relay stands between one lock program and its lock service
// (Redis, PostgreSQL, MariaDB, memcached, ZooKeeper, etcd), so that faults
// at the lock's own commands strike a program as they strike a go-redis
// lock (or a Go lock's statements and requests). A relay listens on
// 127.0.0.1, one listener per lock node, and forwards each connection to
// the client's own network link to that node (network faults still reach
// the program).
// It reads each command the program sends and each reply, and runs the
// command through the client's failpoints (harness.Relay): a pause or
// sleep holds the command or its reply, a crash kills the process and
// drops its connections, a dropped reply ends the connection once the
// client's timeout has passed, so that the program sees a timeout and
// never a reply out of step.
//
// Package program starts one relay per lock program and hands the program
// the relay's addresses in place of the service's; this package knows
// nothing of the line protocol nor of processes, only of the protocols it
// reads: RESP (relay.go), PostgreSQL's simple queries and the batches of
// its extended protocol (pg.go), MariaDB's statements (mysql.go),
// memcached's text protocol (memcached.go), ZooKeeper's jute frames
// (zookeeper.go), whose pings and watch events pass beside the requests
// so that a held request holds no session's heartbeat, and etcd's gRPC
// (etcd.go, over package h2's HTTP/2), whose unary calls (Txn, Put,
// LeaseGrant …) it strikes and whose streaming calls (LeaseKeepAlive,
// Watch) pass beside them likewise.
package relay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
)

// Relay is the relay of one client: its listeners, one per lock node, and
// the connections the program opened through them.
type Relay struct {
	cmds      *harness.Relay
	learn     footprint.Acquires // what the program's requests show of its lock
	proto     Protocol           // what it reads
	timeout   time.Duration      // dial timeout to the link
	listeners []net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Protocol is the protocol a relay reads.
type Protocol int

// The protocols a relay reads.
const (
	Redis     Protocol = iota // RESP2 and RESP3 (relay.go)
	Postgres                  // PostgreSQL's simple queries and extended protocol (pg.go)
	MySQL                     // MariaDB's COM_QUERY and COM_STMT_EXECUTE (mysql.go)
	Memcached                 // memcached's text protocol (memcached.go)
	ZooKeeper                 // ZooKeeper's jute frames (zookeeper.go)
	Etcd                      // etcd's gRPC over HTTP/2 (etcd.go, package h2)
)

// Listen starts a relay of proto for client c with one listener per
// address of upstream, each forwarding there. Close stops it.
func Listen(c *harness.Client, upstream []string, proto Protocol) (*Relay, error) {
	r := &Relay{cmds: harness.NewRelay(c), proto: proto, timeout: c.Timeout(), conns: map[net.Conn]struct{}{}}
	for node, up := range upstream {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("relay to %s: %w", up, err)
		}
		r.listeners = append(r.listeners, ln)
		r.wg.Add(1)
		go r.accept(ln, up, node)
	}
	return r, nil
}

// Addrs are the relay's listeners, host:port, in the order of upstream:
// the addresses the program dials in place of the service's.
func (r *Relay) Addrs() []string {
	var a []string
	for _, ln := range r.listeners {
		a = append(a, ln.Addr().String())
	}
	return a
}

// Protocol is what the relay reads, as Listen was given it.
func (r *Relay) Protocol() Protocol { return r.proto }

// Warmup runs ask, which waits for the program's first answer, with the
// commands the relay reads meanwhile struck by no fault
// (harness.Relay.Warmup): an interpreter's start is not the lock's.
func (r *Relay) Warmup(ask func() error) error { return r.cmds.Warmup(ask) }

// accept serves the connections of one listener, to lock node node (its
// index in the client's Nodes) at up.
func (r *Relay) accept(ln net.Listener, up string, node int) {
	defer r.wg.Done()
	for {
		down, err := ln.Accept()
		if err != nil {
			return // closed
		}
		if !r.track(down) {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.untrack(down)
			upConn, err := net.DialTimeout("tcp", up, r.timeout)
			if err != nil {
				return // the link refused: the program sees its connection closed
			}
			if !r.track(upConn) {
				return
			}
			defer r.untrack(upConn)
			in, out := bufio.NewReaderSize(down, 64<<10), bufio.NewReaderSize(upConn, 64<<10)
			switch r.proto {
			case Postgres:
				r.servePG(down, in, upConn, out)
			case MySQL:
				r.serveMySQL(down, in, upConn, out)
			case Memcached:
				r.serveMemcached(down, in, upConn, out)
			case ZooKeeper:
				r.serveZK(down, in, upConn, out)
			case Etcd:
				r.serveEtcd(down, in, upConn, out)
			default:
				r.serve(down, in, upConn, out, node)
			}
		}()
	}
}

// track registers conn to be closed by drop and close; it refuses, and
// closes conn, once the relay is closed.
func (r *Relay) track(conn net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		conn.Close()
		return false
	}
	r.conns[conn] = struct{}{}
	return true
}

func (r *Relay) untrack(conn net.Conn) {
	r.mu.Lock()
	delete(r.conns, conn)
	r.mu.Unlock()
	conn.Close()
}

// Drop closes every connection, as the death of the process does: the
// client crashed. The relay still listens: Close stops it.
func (r *Relay) Drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for conn := range r.conns {
		conn.Close()
	}
}

// Close stops listening, closes every connection and waits for the relay's
// goroutines. A command held by a failpoint is released by the end of the
// client's context, which the client ends before it closes its process.
func (r *Relay) Close() {
	for _, ln := range r.listeners {
		ln.Close()
	}
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.Drop()
	r.wg.Wait()
}

// serve relays one connection of the program, down (read through in), to
// upConn (read through out), its link to the node, command by command:
// a pipeline's commands wait in the connection, in order, each for the
// reply of the one before.
func (r *Relay) serve(down net.Conn, in *bufio.Reader, upConn net.Conn, out *bufio.Reader, node int) {
	for {
		args, raw, err := readCommand(in)
		if err != nil {
			var perr protocolError
			if errors.As(err, &perr) {
				fmt.Fprintf(down, "-ERR Protocol error: %s (locklab relay)\r\n", perr)
			}
			return
		}
		if passThrough(args) {
			if _, err := upConn.Write(raw); err == nil {
				pipe(down, in, upConn, out)
			}
			return
		}
		var reply []byte
		var sendErr error
		r.learn.Seen(footprint.Redis(args))
		err = r.cmds.Command(node, args, func() (any, error) {
			if _, err := upConn.Write(raw); err != nil {
				sendErr = err
				return nil, err
			}
			for {
				v, err := readValue(out)
				if err != nil {
					sendErr = err
					return nil, err
				}
				if v.kind == '>' {
					// RESP3 push: out of band, not this command's reply.
					if _, err := down.Write(v.raw); err != nil {
						sendErr = err
						return nil, err
					}
					continue
				}
				reply = v.raw
				meaning, rerr := v.meaning()
				sendErr = rerr
				return meaning, rerr
			}
		})
		if reply == nil || err != sendErr {
			// Crashed, dropped, the run ended, or the connection broke.
			return
		}
		if _, err := down.Write(reply); err != nil {
			return
		}
	}
}

// passThrough reports whether a command leaves request and reply: after
// it, replies no longer pair with commands (Pub/Sub, MONITOR, CLIENT REPLY
// OFF or SKIP), so the relay becomes a plain pipe for the rest of the
// connection, and strikes none of its commands.
func passThrough(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch strings.ToLower(args[0]) {
	case "subscribe", "psubscribe", "ssubscribe", "monitor", "sync", "psync":
		return true
	case "client":
		return len(args) > 2 && strings.EqualFold(args[1], "reply") && !strings.EqualFold(args[2], "on")
	}
	return false
}

// pipe copies both ways, what the readers already hold first, until either
// side closes.
func pipe(down net.Conn, in *bufio.Reader, up net.Conn, out *bufio.Reader) {
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, in); up.Close(); done <- struct{}{} }()
	go func() { io.Copy(down, out); down.Close(); done <- struct{}{} }()
	<-done
	<-done
}

// Limits on what the relay accepts, as Redis's own (proto-max-bulk-len
// 512 MB, inline requests of 64 KB), so that garbage cannot make it
// allocate without bound.
const (
	maxBulk   = 512 << 20
	maxCount  = 1 << 24 // elements of one aggregate
	maxDepth  = 64      // nesting of aggregates
	maxInline = 64 << 10
)

// protocolError is a command the relay cannot parse, as Redis would not.
type protocolError string

func (e protocolError) Error() string { return string(e) }

// replyError is a Redis error reply: its text, without the leading '-'.
type replyError string

func (e replyError) Error() string { return string(e) }

// RedisError marks the error as Redis's reply, as go-redis's redis.Error
// does: the node answered, with an error.
func (replyError) RedisError() {}

// value is one RESP value as read, kept as its bytes so that it is
// forwarded exactly as it came.
type value struct {
	kind  byte   // the RESP type byte: + - : $ * and RESP3's _ , # ! = ( % ~ > |
	raw   []byte // every byte of it, attributes included
	str   string // a simple, bulk, verbatim string, an error, a double or a big number
	num   int64  // an integer
	null  bool   // a null: _, $-1 or *-1
	elems []value
}

// meaning is what a reply says in the terms of harness.Relay.Command: a
// string, an int64, a bool or nil, and a Redis error reply as an error.
func (v value) meaning() (any, error) {
	switch {
	case v.kind == '-' || v.kind == '!':
		return nil, replyError(v.str)
	case v.null:
		return nil, nil
	case v.kind == '+' || v.kind == '$':
		return v.str, nil
	case v.kind == ':':
		return v.num, nil
	case v.kind == '#':
		return v.str == "t", nil
	}
	return nil, nil
}

// readCommand reads one command a client sent: an array of bulk strings,
// or an inline command (words separated by spaces; quotes are not parsed).
// raw is what to send to Redis: the array as it came, an inline command
// encoded as an array. Blank inline lines are skipped, as Redis does.
func readCommand(r *bufio.Reader) (args []string, raw []byte, err error) {
	for {
		b, err := r.Peek(1)
		if err != nil {
			return nil, nil, err
		}
		if b[0] != '*' {
			line, err := readLine(r, maxInline)
			if err != nil {
				return nil, nil, err
			}
			args = strings.Fields(strings.TrimRight(string(line), "\r\n"))
			if len(args) == 0 {
				continue
			}
			return args, encodeCommand(args), nil
		}
		v, err := readValue(r)
		if err != nil {
			return nil, nil, err
		}
		if v.null || len(v.elems) == 0 {
			continue // Redis ignores an empty or null array
		}
		for _, e := range v.elems {
			if e.kind != '$' || e.null {
				return nil, nil, protocolError(fmt.Sprintf("expected a bulk string in a command, got %q", e.kind))
			}
			args = append(args, e.str)
		}
		return args, v.raw, nil
	}
}

// encodeCommand is args as a RESP array of bulk strings.
func encodeCommand(args []string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// readValue reads one RESP2 or RESP3 value. A RESP3 attribute (|) is read
// with the value it annotates and returned as that value. Streamed strings
// and aggregates (a length of ?), which Redis never sends, are refused.
func readValue(r *bufio.Reader) (value, error) {
	var raw []byte
	v, err := readInto(r, &raw, 0)
	v.raw = raw
	return v, err
}

func readInto(r *bufio.Reader, raw *[]byte, depth int) (value, error) {
	if depth > maxDepth {
		return value{}, protocolError("aggregates nested too deep")
	}
	line, err := readLine(r, maxInline)
	if err != nil {
		return value{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return value{}, protocolError(fmt.Sprintf("line %q is empty or does not end with CRLF", clip(string(line))))
	}
	*raw = append(*raw, line...)
	v := value{kind: line[0]}
	body := string(line[1 : len(line)-2])
	switch v.kind {
	case '+', '-', ',', '(':
		v.str = body
	case ':':
		if v.num, err = strconv.ParseInt(body, 10, 64); err != nil {
			return v, protocolError(fmt.Sprintf("bad integer %q", body))
		}
	case '_':
		v.null = true
	case '#':
		if body != "t" && body != "f" {
			return v, protocolError(fmt.Sprintf("bad boolean %q", body))
		}
		v.str = body
	case '$', '!', '=':
		n, err := length(body, maxBulk)
		if err != nil {
			return v, err
		}
		if n < 0 {
			v.null = true
			break
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(r, data); err != nil {
			return v, unexpected(err)
		}
		if data[n] != '\r' || data[n+1] != '\n' {
			return v, protocolError("a bulk string does not end with CRLF")
		}
		*raw = append(*raw, data...)
		v.str = string(data[:n])
	case '*', '~', '>', '%', '|':
		n, err := length(body, maxCount)
		if err != nil {
			return v, err
		}
		if n < 0 {
			v.null = true
			break
		}
		if v.kind == '%' || v.kind == '|' {
			n *= 2 // a map holds a key and a value per entry
		}
		for range n {
			e, err := readInto(r, raw, depth+1)
			if err != nil {
				return v, err
			}
			if v.kind != '|' {
				v.elems = append(v.elems, e)
			}
		}
		if v.kind == '|' {
			// An attribute annotates the value that follows: that is the reply.
			return readInto(r, raw, depth)
		}
	default:
		return v, protocolError(fmt.Sprintf("unknown RESP type %q", v.kind))
	}
	return v, nil
}

// length parses the length of a bulk string or aggregate: -1 for a null.
func length(s string, limit int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 || n > limit {
		return 0, protocolError(fmt.Sprintf("bad length %q", s))
	}
	return n, nil
}

// readLine reads through the next LF, at most limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > limit {
			return nil, protocolError("line too long")
		}
		if err == nil {
			return line, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > 0 {
				return nil, unexpected(err)
			}
			return nil, err
		}
	}
}

// unexpected turns an EOF inside a value into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// clip shortens what a program sent to fit in one line of an error. It is
// program's own, copied: this package imports nothing of program.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
