// Package footprint learns a lock's footprint from its own requests: what
// it took (a key, a row, a name), the lease it asked for or was granted,
// and where its hold lives (in a session, which the server frees with the
// connection, or in data with an expiry). It reads one request at a time,
// as the relays hand them over (a RESP command's words, a SQL statement, a
// memcached line, a ZooKeeper request), and a Learner gathers what the
// requests of acquires that succeeded show, keeping only what no request
// contradicts.
//
// It does no I/O and imports nothing of locklab, so that harness, runner
// and program can all use it. Every reader says only what is certain: a
// request that shows nothing of the footprint (a GET, a DEL, a release
// script, a SET without NX) is not learned, and a value it cannot tell (an
// absolute expiry, a TTL computed in a script) is left out rather than
// guessed.
package footprint

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Kind is where a lock's hold lives.
type Kind string

const (
	// Unknown: no request told.
	Unknown Kind = ""
	// Session: a hold the server frees with the connection or session
	// that took it: MariaDB's GET_LOCK, a PostgreSQL advisory lock, an
	// open transaction's row lock, a ZooKeeper ephemeral node, an etcd
	// key attached to a lease.
	Session Kind = "session"
	// Data: a key, item or row that lives until it expires or is deleted,
	// whoever's connection ends: a Redis key, a memcached item, a row
	// with an expiry column.
	Data Kind = "data"
)

// Footprint is what a lock's own requests show of it. A reader fills it
// from one request; a Learner from many.
type Footprint struct {
	// Key is the key, row or name the lock took, as its requests name it
	// to the server ("lock:orders:KEY", the name of GET_LOCK, the argument
	// of pg_advisory_lock as written, a ZooKeeper lock node's parent);
	// "" when not told.
	Key string `json:"key,omitempty"`
	// Lease is the lease asked for or granted: PX/EX, a memcached
	// exptime, the interval written into a row's expiry, an etcd lease's
	// granted TTL, ZooKeeper's negotiated session timeout. 0 when none
	// was seen or it could not be told (an absolute expiry).
	Lease time.Duration `json:"lease_ns,omitempty"`
	// Slack is how much sooner than Lease the server may free the hold
	// through its clock's grain alone: 1 s for memcached, whose clock
	// ticks in whole seconds (an exptime of n lives n−1 to n s); 0
	// elsewhere.
	Slack time.Duration `json:"slack_ns,omitempty"`
	Kind  Kind          `json:"kind,omitempty"`
	// LeaseOnly says the request took nothing but set the lease of Key
	// (PEXPIRE k n, memcached's touch) or, with Key "", of the session
	// that holds the lock (ZooKeeper's session timeout, an etcd lease
	// grant).
	LeaseOnly bool `json:"lease_only,omitempty"`
	// From, LeaseFrom and KindFrom are the requests Key, Lease and Kind
	// were learned from, shortened for a page ("SET lock:x … NX PX 1000").
	From      string `json:"from,omitempty"`
	LeaseFrom string `json:"lease_from,omitempty"`
	KindFrom  string `json:"kind_from,omitempty"`
}

// String is the footprint for a page: "key lock:x, lease 1000 ms, data
// (from SET lock:x … NX PX 1000)", each request named once; a lease with
// a Slack as its range ("lease 1000–2000 ms").
func (f Footprint) String() string {
	type part struct{ text, from string }
	var parts []part
	if f.Key != "" {
		parts = append(parts, part{"key " + f.Key, f.From})
	}
	var lease, kind []part
	if f.Lease > 0 {
		lease = []part{{"lease " + f.LeaseText(), f.LeaseFrom}}
	}
	if f.Kind != Unknown {
		kind = []part{{string(f.Kind), f.KindFrom}}
	}
	if f.KindFrom == f.From && f.LeaseFrom != f.From { // each request named once
		parts = append(append(parts, kind...), lease...)
	} else {
		parts = append(append(parts, lease...), kind...)
	}
	if len(parts) == 0 {
		return "nothing learned"
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.text)
		if p.from != "" && (i == len(parts)-1 || parts[i+1].from != p.from) {
			b.WriteString(" (from " + p.from + ")")
		}
	}
	return b.String()
}

// took is a footprint of one request that took Key (kind, lease).
func took(key string, kind Kind, lease time.Duration, from string) Footprint {
	f := Footprint{Key: key, Kind: kind, From: from, KindFrom: from}
	if kind == Unknown {
		f.KindFrom = ""
	}
	if lease > 0 {
		f.Lease, f.LeaseFrom = lease, from
	}
	return f
}

// leaseOf is a footprint of one request that set the lease of key ("": the
// session's).
func leaseOf(key string, lease time.Duration, from string) Footprint {
	return Footprint{Key: key, Lease: lease, LeaseOnly: true, LeaseFrom: from}
}

// Learner gathers the footprints of the requests of acquires that
// succeeded. The first value of each field wins; a later request that
// contradicts it makes the field untold for good, with the reason in
// Ambiguous. A lease is learned only for the key the lock took (a PEXPIRE
// of another key is not the lock's), and a session's lease (Key "") only
// when the hold lives in a session. The zero Learner is ready to use; it
// is not safe for concurrent use.
type Learner struct {
	fp                  Footprint
	session             Footprint            // a session's lease
	pending             map[string]Footprint // leases of keys not yet taken
	badKey, badLease    bool
	badKind, badSession bool
	why                 []string
}

// Add learns what one request shows.
func (l *Learner) Add(f Footprint) {
	switch {
	case f.LeaseOnly && f.Key == "":
		l.setLease(&l.session, f, &l.badSession, "session lease")
	case f.LeaseOnly && l.fp.Key == "" && !l.badKey:
		if l.pending == nil {
			l.pending = map[string]Footprint{}
		}
		if _, ok := l.pending[f.Key]; !ok {
			l.pending[f.Key] = f
		}
	case f.LeaseOnly:
		if f.Key == l.fp.Key && !l.badKey {
			l.setLease(&l.fp, f, &l.badLease, "lease")
		}
	default:
		l.take(f)
	}
}

// take learns a request that took something.
func (l *Learner) take(f Footprint) {
	sameKey := true
	if f.Key != "" && !l.badKey {
		switch l.fp.Key {
		case "":
			l.fp.Key, l.fp.From = f.Key, f.From
			if p, ok := l.pending[f.Key]; ok {
				l.setLease(&l.fp, p, &l.badLease, "lease")
			}
			l.pending = nil
		case f.Key:
		default:
			l.badKey, sameKey = true, false
			l.why = append(l.why, fmt.Sprintf("key: %s (from %s), then %s (from %s)", l.fp.Key, l.fp.From, f.Key, f.From))
		}
	}
	if f.Kind != Unknown && !l.badKind {
		switch l.fp.Kind {
		case Unknown:
			l.fp.Kind, l.fp.KindFrom = f.Kind, f.KindFrom
		case f.Kind:
		default:
			l.badKind = true
			l.why = append(l.why, fmt.Sprintf("kind: %s (from %s), then %s (from %s)", l.fp.Kind, l.fp.KindFrom, f.Kind, f.KindFrom))
		}
	}
	if f.Lease > 0 && sameKey && !l.badKey {
		l.setLease(&l.fp, f, &l.badLease, "lease")
	}
}

// setLease learns f's lease into to, or marks it bad (*bad) when it
// contradicts the one learned.
func (l *Learner) setLease(to *Footprint, f Footprint, bad *bool, name string) {
	switch {
	case *bad || f.Lease <= 0:
	case to.Lease == 0:
		to.Lease, to.Slack, to.LeaseFrom = f.Lease, f.Slack, f.LeaseFrom
	case to.Lease != f.Lease:
		*bad = true
		l.why = append(l.why, fmt.Sprintf("%s: %d ms (from %s), then %d ms (from %s)", name,
			to.Lease.Milliseconds(), to.LeaseFrom, f.Lease.Milliseconds(), f.LeaseFrom))
	}
}

// Footprint is what was learned: each field untold ("", 0, Unknown) that
// no request showed or that requests contradicted. A lock whose hold
// lives in a session and which showed no lease of its own has its
// session's (ZooKeeper's timeout, the etcd lease's TTL).
func (l *Learner) Footprint() Footprint {
	f := l.fp
	f.LeaseOnly = false
	if l.badKey {
		f.Key, f.From = "", ""
	}
	if l.badKind {
		f.Kind, f.KindFrom = Unknown, ""
	}
	if l.badLease || l.badKey {
		f.Lease, f.Slack, f.LeaseFrom = 0, 0, ""
	}
	if f.Kind == Session && f.Lease == 0 && !l.badLease && !l.badSession && l.session.Lease > 0 {
		f.Lease, f.LeaseFrom = l.session.Lease, l.session.LeaseFrom
	}
	return f
}

// Ambiguous says why each field that requests contradicted is untold, one
// line per field, in the order found.
func (l *Learner) Ambiguous() []string { return append([]string(nil), l.why...) }

// Matches reports whether key, a key the lock's requests named to the
// server, is the workload's lock key lockKey: the same, or containing it
// as a whole word between separators ("lock:orders:KEY", "KEY.lock",
// "/locks/KEY/lock-0000000003", "hashtext('KEY')"), or its hash as some
// libraries store it: the hex SHA-256 (Symfony's PdoStore), SHA-1 or MD5
// of lockKey, or its CRC-32 in decimal, unsigned or signed.
func Matches(key, lockKey string) bool {
	if lockKey == "" || key == "" {
		return false
	}
	for i := 0; i+len(lockKey) <= len(key); {
		j := strings.Index(key[i:], lockKey)
		if j < 0 {
			break
		}
		start, end := i+j, i+j+len(lockKey)
		if (start == 0 || !wordRune(key[start-1])) && (end == len(key) || !wordRune(key[end])) {
			return true
		}
		i = start + 1
	}
	lower, crc := strings.ToLower(key), crc32.ChecksumIEEE([]byte(lockKey))
	s256, s1, m5 := sha256.Sum256([]byte(lockKey)), sha1.Sum([]byte(lockKey)), md5.Sum([]byte(lockKey))
	return lower == hex.EncodeToString(s256[:]) || lower == hex.EncodeToString(s1[:]) || lower == hex.EncodeToString(m5[:]) ||
		key == strconv.FormatUint(uint64(crc), 10) || key == strconv.Itoa(int(int32(crc)))
}

// wordRune reports whether byte c continues a word: a letter or digit.
func wordRune(c byte) bool { return c >= 0x80 || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) }

// short is words as a page shows a request: each word cut to 40 bytes,
// the whole to 120.
func short(words ...string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = cut(strings.Join(strings.Fields(w), " "), 40)
	}
	return cut(strings.Join(out, " "), 120)
}

// cut is s cut to n bytes with an ellipsis.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// utf8Start reports whether c starts a UTF-8 sequence.
func utf8Start(c byte) bool { return c&0xC0 != 0x80 }
