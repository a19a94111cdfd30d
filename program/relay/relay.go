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
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/resp"
)

// Relay is the relay of one client in one run: its listeners (its
// Front), one per lock node, and the connections the program opened
// through them in this run.
type Relay struct {
	cmds     *harness.Relay
	learn    footprint.Acquires // what the program's requests show of its lock
	proto    Protocol           // what it reads
	timeout  time.Duration      // dial timeout to the link
	front    *Front
	ownFront bool     // Listen made front: Close closes it
	upstream []string // the client's links, by lock node

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
	// RedisReplicas is RESP to the data nodes of one replicated master,
	// which relayed Sentinels name to the program: each command counts
	// as sent to lock node 0, the master, whichever data node it reaches,
	// as a Go lock's Sentinel failover client's commands do.
	RedisReplicas
)

// Listen starts a relay of proto for client c with one listener per
// address of upstream, each forwarding there. Close stops it.
func Listen(c *harness.Client, upstream []string, proto Protocol) (*Relay, error) {
	f, err := NewFront(len(upstream))
	if err != nil {
		return nil, err
	}
	r, err := Attach(f, c, upstream, proto)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.ownFront = true
	return r, nil
}

// Attach starts a relay of proto for client c on front f, whose listeners
// forward to upstream, in order, from now until the relay's Close; f
// outlives it, for the relay of the next run. f serves one relay at a
// time.
func Attach(f *Front, c *harness.Client, upstream []string, proto Protocol) (*Relay, error) {
	if len(upstream) != len(f.listeners) {
		return nil, fmt.Errorf("relay: %d listeners for %d upstream addresses", len(f.listeners), len(upstream))
	}
	r := &Relay{cmds: harness.NewRelay(c), proto: proto, timeout: c.Timeout(), front: f, upstream: upstream,
		conns: map[net.Conn]struct{}{}}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur != nil {
		return nil, errors.New("relay: the listeners serve another relay")
	}
	f.cur = r
	return r, nil
}

// Addrs are the relay's listeners, host:port, in the order of upstream:
// the addresses the program dials in place of the service's.
func (r *Relay) Addrs() []string { return r.front.Addrs() }

// Protocol is what the relay reads, as Listen was given it.
func (r *Relay) Protocol() Protocol { return r.proto }

// Warmup runs ask, which waits for the program's first answer, with the
// commands the relay reads meanwhile struck by no fault
// (harness.Relay.Warmup): an interpreter's start is not the lock's.
func (r *Relay) Warmup(ask func() error) error { return r.cmds.Warmup(ask) }

// serveConn serves one connection of the program, accepted on the
// listener of lock node node (its index in the client's Nodes): the
// relay dials the client's link to that node and relays between the two.
func (r *Relay) serveConn(down net.Conn, node int) {
	up := r.upstream[node]
	if r.proto == RedisReplicas {
		node = 0
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		down.Close()
		return
	}
	r.wg.Add(1) // under mu, before closed: Close's Wait sees it
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		if !r.track(down) {
			return
		}
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

// Close closes every connection and waits for the relay's goroutines;
// its front then refuses connections until the next Attach, or stops
// listening when Listen made it. A command held by a failpoint is
// released by the end of the client's context, which the client ends
// before it closes its process.
func (r *Relay) Close() {
	r.front.detach(r)
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.Drop()
	r.wg.Wait()
	if r.ownFront {
		r.front.Close()
	}
}

// serve relays one connection of the program, down (read through in), to
// upConn (read through out), its link to the node, command by command:
// a pipeline's commands wait in the connection, in order, each for the
// reply of the one before.
func (r *Relay) serve(down net.Conn, in *bufio.Reader, upConn net.Conn, out *bufio.Reader, node int) {
	for {
		args, raw, err := resp.ReadCommand(in)
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
				v, err := resp.ReadValue(out)
				if err != nil {
					sendErr = err
					return nil, err
				}
				if v.Kind == '>' {
					// RESP3 push: out of band, not this command's reply.
					if _, err := down.Write(v.Raw); err != nil {
						sendErr = err
						return nil, err
					}
					continue
				}
				reply = v.Raw
				m, rerr := meaning(v)
				sendErr = rerr
				return m, rerr
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

// protocolError is a command or reply the relay cannot parse, as Redis
// would not: resp's, under the name this package's other protocols use too.
type protocolError = resp.ProtocolError

// replyError is a Redis error reply: its text, without the leading '-'.
type replyError string

func (e replyError) Error() string { return string(e) }

// RedisError marks the error as Redis's reply, as go-redis's redis.Error
// does: the node answered, with an error.
func (replyError) RedisError() {}

// meaning is what a reply says in the terms of harness.Relay.Command: a
// string, an int64, a bool or nil, and a Redis error reply as an error.
func meaning(v resp.Value) (any, error) {
	switch {
	case v.Kind == '-' || v.Kind == '!':
		return nil, replyError(v.Str)
	case v.Null:
		return nil, nil
	case v.Kind == '+' || v.Kind == '$':
		return v.Str, nil
	case v.Kind == ':':
		return v.Num, nil
	case v.Kind == '#':
		return v.Str == "t", nil
	}
	return nil, nil
}

// clip shortens what a program sent to fit in one line of an error. It is
// program's own, copied: this package imports nothing of program.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
