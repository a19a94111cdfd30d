package footprint

import (
	"encoding/binary"
	"path"
	"strconv"
	"strings"
	"time"
)

// memcachedMaxRelative is the largest exptime memcached reads as seconds
// from now (30 days); a larger one is an absolute Unix time.
const memcachedMaxRelative = 30 * 24 * 3600

// Memcached reads one request line of a lock in memcached's text
// protocol, its words as the relay hands them over. It learns:
//
//   - add k flags exptime bytes: Data, key k, lease exptime seconds with
//     a Slack of 1 s (memcached's clock ticks in whole seconds, so the
//     item lives n−1 to n s); no lease for 0 (no expiry) or an absolute
//     time (over 30 days);
//   - ms k size … ME (the meta add) … Tn: likewise;
//   - touch k exptime, gat exptime k, mg k … Tn: the lease of k (LeaseOnly).
//
// set, cas, get, delete show nothing: set and cas overwrite, they take
// nothing a lock's rivals could not.
func Memcached(words []string) (Footprint, bool) {
	if len(words) < 3 {
		return Footprint{}, false
	}
	from := short(words...)
	switch words[0] {
	case "add":
		if len(words) >= 5 {
			d, ok := exptime(words[3])
			if ok {
				return mcSlack(took(words[1], Data, d, from)), true
			}
		}
	case "touch":
		if d, ok := exptime(words[2]); ok && d > 0 {
			return mcSlack(leaseOf(words[1], d, from)), true
		}
	case "gat", "gats":
		if d, ok := exptime(words[1]); ok && d > 0 && len(words) == 3 {
			return mcSlack(leaseOf(words[2], d, from)), true
		}
	case "ms", "mg":
		return metaRequest(words, from)
	}
	return Footprint{}, false
}

// metaRequest reads a meta set (ms k size flags…) or get (mg k flags…).
func metaRequest(words []string, from string) (Footprint, bool) {
	flags := words[2:]
	if words[0] == "ms" {
		flags = words[3:]
	}
	add, d, hasTTL := false, time.Duration(0), false
	for _, f := range flags {
		switch {
		case f == "ME" || f == "Me":
			add = true
		case strings.HasPrefix(f, "T"):
			var ok bool
			if d, ok = exptime(f[1:]); !ok {
				return Footprint{}, false
			}
			hasTTL = true
		}
	}
	switch {
	case words[0] == "ms" && add:
		return mcSlack(took(words[1], Data, d, from)), true
	case words[0] == "mg" && hasTTL && d > 0:
		return mcSlack(leaseOf(words[1], d, from)), true
	}
	return Footprint{}, false
}

// exptime reads a memcached exptime as a lease: 0 for none or an absolute
// time, false for one that is not a number or already past.
func exptime(w string) (time.Duration, bool) {
	n, err := strconv.ParseInt(w, 10, 64)
	switch {
	case err != nil || n < 0:
		return 0, false
	case n > memcachedMaxRelative:
		return 0, true
	}
	return time.Duration(n) * time.Second, true
}

// mcSlack gives f memcached's grain when it has a lease.
func mcSlack(f Footprint) Footprint {
	if f.Lease > 0 {
		f.Slack = time.Second
	}
	return f
}

// ZooKeeper's create modes (CreateMode in ZooKeeper's Java client): the
// flags of a create request.
const (
	ZKEphemeral  = 1 // the node goes with the session
	ZKSequential = 2 // the server appends a 10-digit counter to the name
)

// ZooKeeper reads one request of a lock: its operation as the relay names
// it ("create", "create2", a multi's first operation), the path it names,
// and for a create its flags (read them with ZooKeeperCreate). A create of
// an ephemeral node is a Session hold: its key is the path, or for a
// sequential node (a lock recipe's "/locks/KEY/…-lock-", which the
// server names "…-lock-0000000003") the parent, the lock all its
// contenders' nodes share. Persistent, container and TTL nodes (a recipe's
// parents), and every other request, show nothing.
func ZooKeeper(op, nodePath string, flags int32) (Footprint, bool) {
	switch op {
	case "create", "create2":
	default:
		return Footprint{}, false
	}
	if flags != ZKEphemeral && flags != ZKEphemeral|ZKSequential {
		return Footprint{}, false
	}
	mode := "ephemeral"
	key := nodePath
	if flags&ZKSequential != 0 {
		mode, key = "ephemeral sequential", path.Dir(nodePath)
	}
	return took(key, Session, 0, short(op, nodePath, "("+mode+")")), true
}

// ZooKeeperCreate reads the body of a create or create2 request (after
// its length, xid and opcode, as the relay's zkWords gets it; in a multi,
// after the operation's 9-byte MultiHeader; jute's CreateRequest: path,
// data, ACL, flags): its path and flags.
func ZooKeeperCreate(body []byte) (nodePath string, flags int32, ok bool) {
	str := func() ([]byte, bool) { // a length-prefixed buffer, -1 for null
		if len(body) < 4 {
			return nil, false
		}
		n := int32(binary.BigEndian.Uint32(body))
		body = body[4:]
		if n < 0 {
			return nil, n == -1
		}
		if int(n) > len(body) {
			return nil, false
		}
		b := body[:n]
		body = body[n:]
		return b, true
	}
	p, ok1 := str()
	_, ok2 := str()
	if !ok1 || !ok2 || len(body) < 4 {
		return "", 0, false
	}
	acls := int32(binary.BigEndian.Uint32(body))
	body = body[4:]
	for i := int32(0); i < acls; i++ { // perms, scheme, id
		if len(body) < 4 {
			return "", 0, false
		}
		body = body[4:]
		if _, ok := str(); !ok {
			return "", 0, false
		}
		if _, ok := str(); !ok {
			return "", 0, false
		}
	}
	if len(body) < 4 {
		return "", 0, false
	}
	return string(p), int32(binary.BigEndian.Uint32(body)), true
}

// ZooKeeperSession is the lease of a ZooKeeper session whose timeout the
// server negotiated (its connect reply: read it with
// ZooKeeperConnectReply): the lease of every ephemeral node the session
// holds, counted from the server's last word from the client.
func ZooKeeperSession(timeout time.Duration) Footprint {
	return leaseOf("", timeout, "connect: session timeout "+strconv.FormatInt(timeout.Milliseconds(), 10)+" ms")
}

// ZooKeeperConnectReply reads the server's connect reply frame, its
// length first (jute's ConnectResponse: protocol version, timeout in ms,
// session id, password): the session timeout it negotiated.
func ZooKeeperConnectReply(frame []byte) (time.Duration, bool) {
	if len(frame) < 12 {
		return 0, false
	}
	ms := int32(binary.BigEndian.Uint32(frame[8:]))
	if ms <= 0 {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// EtcdGrant is what an etcd LeaseGrant shows: the TTL the server granted
// (its reply's, which may differ from the one asked for) is the lease of
// the session whose keys are attached to it (Etcd reads it from the
// call).
func EtcdGrant(granted time.Duration) Footprint {
	return leaseOf("", granted, "LeaseGrant: TTL "+strconv.FormatInt(int64(granted/time.Second), 10)+" s")
}

// EtcdPut is what an etcd Put of key, or a Txn's put of it (as
// concurrency.Mutex and python-etcd3's Lock take a lock), shows: with a
// lease (lease ≠ 0), a Session hold on key, which goes with the lease; the
// key of a recipe that names its node by the lease's hex id
// ("/locks/KEY/694d7a1c2b3e4f01") is the parent, shared by every
// contender. A put without a lease shows nothing: it is data that never
// expires, or not the lock at all.
func EtcdPut(key string, lease int64) (Footprint, bool) {
	if lease == 0 || key == "" {
		return Footprint{}, false
	}
	lock := key
	if i := strings.LastIndexByte(key, '/'); i > 0 && key[i+1:] == strconv.FormatInt(lease, 16) {
		lock = key[:i]
	}
	return took(lock, Session, 0, short("Put", key, "lease "+strconv.FormatInt(lease, 16))), true
}
