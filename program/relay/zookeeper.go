package relay

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/resp"
	"io"
	"net"
	"strconv"
	"sync"
)

// zkMulti is the opcode of a multi, whose first operation names it;
// zkWatchEvent is the xid of a watch event.
const zkMulti, zkWatchEvent = 14, -1

// zkMaxFrame bounds a frame the relay reads: the server's own bound,
// jute.maxbuffer, is 1 MB by default and raised by its operator
// (https://zookeeper.apache.org/doc/current/zookeeperAdmin.html), so that
// garbage cannot make the relay allocate without bound.
const zkMaxFrame = 64 << 20

// zkOps names ZooKeeper's opcodes (ZooDefs.OpCode in
// https://github.com/apache/zookeeper/blob/master/zookeeper-server/src/main/java/org/apache/zookeeper/ZooDefs.java).
var zkOps = map[int32]string{
	1: "create", 2: "delete", 3: "exists", 4: "getData", 5: "setData", 6: "getACL", 7: "setACL",
	8: "getChildren", 9: "sync", 11: "ping", 12: "getChildren2", 13: "check", 14: "multi",
	15: "create2", 16: "reconfig", 17: "checkWatches", 18: "removeWatches", 19: "createContainer",
	20: "deleteContainer", 21: "createTTL", 22: "multiRead", 100: "auth", 101: "setWatches",
	102: "sasl", 103: "getEphemerals", 104: "getAllChildrenNumber", 105: "setWatches2",
	106: "addWatch", 107: "whoAmI", -11: "close",
}

// zkPathless are the opcodes whose request does not start with a path
// (zookeeper.jute:
// https://github.com/apache/zookeeper/blob/master/zookeeper-jute/src/main/resources/zookeeper.jute).
// zkSetup are those that are the session's upkeep, which a Go lock never
// sends: they count in no phase, as Redis's PING does.
var (
	zkPathless = map[int32]bool{11: true, 14: true, 16: true, 22: true, 100: true, 101: true, 102: true, 105: true, 107: true, -11: true}
	zkSetup    = map[int32]bool{11: true, 100: true, 101: true, 102: true, 105: true, 107: true}
)

// zkFrame is one frame after the connect exchange: a request (xid,
// opcode, body) or a reply (xid, zxid, err, body).
type zkFrame struct {
	raw           []byte // every byte of it, its length included
	xid           int32
	code          int32         // a request's opcode; a reply's error code (0: none)
	after, handed chan struct{} // closed once the frame before it, and it, were handed on
}

// zkServerError is an error code the server answered a request with
// (KeeperException.Code in
// https://github.com/apache/zookeeper/blob/master/zookeeper-server/src/main/java/org/apache/zookeeper/KeeperException.java):
// it answered, with an error (-101 no node, -110 the node exists …).
type zkServerError int32

func (e zkServerError) Error() string { return "zookeeper: error " + strconv.Itoa(int(e)) }

// zkConn is one relayed ZooKeeper connection after its connect exchange.
// Three goroutines serve it: readRequests, which passes the frames of
// negative xid at once and queues the others; work, which sends those in
// order, each through the failpoints, waiting for its reply before the
// next (the server answers them in order: ZooKeeper's programmer's guide,
// https://zookeeper.apache.org/doc/current/zookeeperProgrammers.html#ch_zkGuarantees);
// readReplies, which hands work its replies, and the program pings' at
// once, so that a held request holds no heartbeat, and watch events in
// their place: a client drops an event of a watch whose reply has not
// come, and a recipe's waiter would wait for it for ever.
type zkConn struct {
	r        *Relay
	down, up net.Conn
	downMu   sync.Mutex // the program's connection: readReplies and work write it
	upMu     sync.Mutex // the server's: readRequests and work write it
	queue    chan zkFrame
	replies  chan zkFrame
	upDone   chan struct{} // closed when the server's side ended: work ends after its request
	done     chan struct{} // closed by end
	once     sync.Once
	last     chan struct{}  // readReplies': closed once the last reply or event it read was handed on
	events   sync.WaitGroup // handOn's
}

// serveZK relays one ZooKeeper connection of the program to upConn, as
// serve does Redis's: it passes the connect exchange (the first frame each
// way, which has no xid) through, then runs each request through the
// client's failpoints with its reply, paired by xid: its words are its
// opcode and the path it names ("create /locklab/lock-"; a multi's, its
// first operation's), and the harness names it by the first, CREATE, as
// it names a statement. Pings, watch events, auth and setWatches pass at
// once, struck by nothing, even while a request is held: a held reply
// lets them by until the relay ends the connection. A frame too long to
// be one (a four-letter word such as ruok) makes the relay a plain pipe.
func (r *Relay) serveZK(down net.Conn, in *bufio.Reader, upConn net.Conn, out *bufio.Reader) {
	if b, err := in.Peek(4); err != nil || binary.BigEndian.Uint32(b) > zkMaxFrame {
		if err == nil {
			pipe(down, in, upConn, out)
		}
		return
	}
	for _, hop := range []struct {
		from *bufio.Reader
		to   net.Conn
	}{{in, upConn}, {out, down}} {
		raw, err := readZKFrame(hop.from)
		if err != nil {
			return
		}
		if hop.from == out {
			if timeout, ok := footprint.ZooKeeperConnectReply(raw); ok {
				r.learn.Seen(footprint.ZooKeeperSession(timeout), true)
			}
		}
		if _, err := hop.to.Write(raw); err != nil {
			return
		}
	}
	z := &zkConn{r: r, down: down, up: upConn, queue: make(chan zkFrame, 1024), replies: make(chan zkFrame, 1),
		upDone: make(chan struct{}), done: make(chan struct{}), last: make(chan struct{})}
	close(z.last)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); z.readReplies(out) }()
	go func() { defer wg.Done(); z.work() }()
	z.readRequests(in)
	z.end()
	wg.Wait()
	z.events.Wait()
}

// end closes both sides of the connection, once.
func (z *zkConn) end() {
	z.once.Do(func() {
		close(z.done)
		z.down.Close()
		z.up.Close()
	})
}

// write writes raw to conn, holding mu.
func write(mu *sync.Mutex, conn net.Conn, raw []byte) error {
	mu.Lock()
	defer mu.Unlock()
	_, err := conn.Write(raw)
	return err
}

// readRequests reads the program's frames until its connection ends.
// Those of a negative xid pair with no request of the lock's (a ping's -2,
// auth's -4, setWatches' -8, which clients send with these fixed xids:
// ClientCnxn in
// https://github.com/apache/zookeeper/blob/master/zookeeper-server/src/main/java/org/apache/zookeeper/ClientCnxn.java),
// and pass at once; so do the server's replies to them, and its watch
// events (-1), in readReplies.
func (z *zkConn) readRequests(in *bufio.Reader) {
	for {
		raw, err := readZKFrame(in)
		if err != nil || len(raw) < 12 {
			return
		}
		f := zkFrame{raw: raw, xid: int32(binary.BigEndian.Uint32(raw[4:])), code: int32(binary.BigEndian.Uint32(raw[8:]))}
		if f.xid < 0 {
			if write(&z.upMu, z.up, raw) != nil {
				return
			}
			continue
		}
		select {
		case z.queue <- f:
		case <-z.done:
			return
		}
	}
}

// readReplies reads the server's frames until its connection ends.
func (z *zkConn) readReplies(out *bufio.Reader) {
	defer close(z.upDone)
	for {
		raw, err := readZKFrame(out)
		if err != nil || len(raw) < 20 {
			return
		}
		f := zkFrame{raw: raw, xid: int32(binary.BigEndian.Uint32(raw[4:])), code: int32(binary.BigEndian.Uint32(raw[16:]))}
		if f.xid < 0 && f.xid != zkWatchEvent {
			if write(&z.downMu, z.down, raw) != nil {
				return
			}
			continue
		}
		f.after, f.handed = z.last, make(chan struct{})
		z.last = f.handed
		if f.xid == zkWatchEvent {
			z.events.Go(func() { z.handOn(f) })
			continue
		}
		select {
		case z.replies <- f:
		case <-z.done:
			return
		}
	}
}

// handOn writes f to the program once what the server sent before it was
// handed on; false, and the connection ended, once it ended or broke.
func (z *zkConn) handOn(f zkFrame) bool {
	defer close(f.handed)
	select {
	case <-f.after:
	case <-z.done:
		return false
	}
	if write(&z.downMu, z.down, f.raw) != nil {
		z.end()
		return false
	}
	return true
}

// work sends the queued requests in order, and hands on their replies,
// each after what the server sent before it.
func (z *zkConn) work() {
	defer z.end()
	for {
		var req zkFrame
		select {
		case req = <-z.queue:
		case <-z.upDone:
			return
		case <-z.done:
			return
		}
		reply, ok := z.exchange(req)
		if !ok || !z.handOn(reply) {
			return // crashed, dropped, the run ended, or the connection broke
		}
	}
}

// exchange sends one request through the failpoints (the session's
// upkeep past them) and returns its reply, or false when it must not be
// handed on.
func (z *zkConn) exchange(req zkFrame) (zkFrame, bool) {
	var reply zkFrame
	var sendErr error
	send := func() (any, error) {
		if err := write(&z.upMu, z.up, req.raw); err != nil {
			sendErr = err
			return nil, err
		}
		f, err := z.reply()
		if err == nil && f.xid != req.xid {
			err = protocolError(fmt.Sprintf("ZooKeeper replied to xid %d, not %d", f.xid, req.xid))
		}
		if err != nil {
			sendErr = err
			return nil, err
		}
		reply, sendErr = f, nil
		if f.code != 0 {
			sendErr = zkServerError(f.code)
		}
		return nil, sendErr
	}
	var err error
	if zkSetup[req.code] {
		_, err = send()
	} else {
		z.r.learn.Seen(zkFootprint(req.code, req.raw[12:]))
		err = z.r.cmds.Statement(zkWords(req.code, req.raw[12:]), send)
	}
	return reply, reply.raw != nil && err == sendErr
}

// reply waits for the reply to the request sent, which readReplies may
// have handed over just before the server's side ended.
func (z *zkConn) reply() (zkFrame, error) {
	select {
	case f := <-z.replies:
		return f, nil
	case <-z.done:
		return zkFrame{}, net.ErrClosed
	case <-z.upDone:
		select {
		case f := <-z.replies:
			return f, nil
		default:
			return zkFrame{}, io.ErrUnexpectedEOF
		}
	}
}

// zkWords names a request of opcode op with body body: its opcode's name
// and the path it names, a multi's by its first operation.
func zkWords(op int32, body []byte) []string {
	words := []string{zkOpName(op)}
	if op == zkMulti && len(body) >= 9 {
		// MultiHeader: the operation's type, done (a bool), err.
		op = int32(binary.BigEndian.Uint32(body))
		words, body = append(words, zkOpName(op)), body[9:]
	}
	if zkPathless[op] || len(body) < 4 {
		return words
	}
	n := int32(binary.BigEndian.Uint32(body))
	if n < 0 || int(n) > len(body)-4 {
		return words
	}
	return append(words, string(body[4:4+n]))
}

// zkFootprint is what a request of opcode op with body shows of the
// lock: a create's path and flags.
func zkFootprint(op int32, body []byte) (footprint.Footprint, bool) {
	if op != 1 && op != 15 { // create, create2
		return footprint.Footprint{}, false
	}
	nodePath, flags, ok := footprint.ZooKeeperCreate(body)
	if !ok {
		return footprint.Footprint{}, false
	}
	return footprint.ZooKeeper(zkOpName(op), nodePath, flags)
}

// zkOpName is the name of opcode op.
func zkOpName(op int32) string {
	if name, ok := zkOps[op]; ok {
		return name
	}
	return "op" + strconv.Itoa(int(op))
}

// readZKFrame reads one frame: its length, which does not count itself,
// then as many bytes; raw is every byte of it.
func readZKFrame(r *bufio.Reader) ([]byte, error) {
	head := make([]byte, 4)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(head)
	if n > zkMaxFrame {
		return nil, protocolError(fmt.Sprintf("ZooKeeper frame of length %d", int32(n)))
	}
	raw := make([]byte, 4+n)
	copy(raw, head)
	if _, err := io.ReadFull(r, raw[4:]); err != nil {
		return nil, resp.Unexpected(err)
	}
	return raw, nil
}
