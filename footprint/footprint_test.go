package footprint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"strconv"
	"strings"
	"testing"
	"time"
)

// want is what a reader must show of one request: ok false for a request
// that shows nothing of the footprint.
type want struct {
	ok        bool
	key       string
	lease     time.Duration
	kind      Kind
	leaseOnly bool
}

// check compares f, ok with w.
func check(t *testing.T, name string, f Footprint, ok bool, w want) {
	t.Helper()
	if ok != w.ok {
		t.Errorf("%s: ok %v, want %v (%+v)", name, ok, w.ok, f)
		return
	}
	if !ok {
		return
	}
	if f.Key != w.key || f.Lease != w.lease || f.Kind != w.kind || f.LeaseOnly != w.leaseOnly {
		t.Errorf("%s: got key %q lease %v kind %q leaseOnly %v, want %+v", name, f.Key, f.Lease, f.Kind, f.LeaseOnly, w)
	}
	if f.Lease > 0 && f.LeaseFrom == "" || f.Kind != Unknown && f.KindFrom == "" || !f.LeaseOnly && f.Key != "" && f.From == "" {
		t.Errorf("%s: a field learned from no request: %+v", name, f)
	}
}

// The Lua scripts below are written for these tests in the shapes real
// libraries send (the request, not their code).
const (
	// Redisson's tryLock: a reentrant hash, its lease in ARGV[1] ms.
	redissonLock = "if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then " +
		"redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; " +
		"return redis.call('pttl', KEYS[1]);"
	// Redisson's watchdog renewal: an expiry alone.
	redissonRenew = "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('pexpire', KEYS[1], ARGV[1]); return 1; end; return 0;"
	// Symfony's RedisStore save: a sorted set of tokens, the TTL a local.
	symfonySave = `
local key = KEYS[1]
local uniqueToken = ARGV[2]
local ttl = tonumber(ARGV[3])
if redis.call("ZSCORE", key, uniqueToken) then
    return redis.call("PEXPIRE", key, ttl)
end
redis.call("ZADD", key, ARGV[1] + ttl, uniqueToken)
redis.call("PEXPIRE", key, ttl)
return 1`
	// A SET NX PX inside a script (redlock-style clients).
	setScript = `return redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2])`
	// The compare-and-delete release of redis-py, redsync, Laravel.
	releaseScript = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`
	// redis-py's extend: the new TTL is computed from PTTL, never one value.
	extendScript = `
local token = redis.call('get', KEYS[1])
if not token or token ~= ARGV[1] then return 0 end
local expiration = redis.call('pttl', KEYS[1])
local newttl = ARGV[2]
if ARGV[3] == "0" then
    newttl = ARGV[2] + expiration
end
redis.call('pexpire', KEYS[1], newttl)
return 1`
	// Redisson's unlock: it decrements the hash and deletes it, a release.
	redissonUnlock = "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; " +
		"local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); " +
		"if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; " +
		"else redis.call('del', KEYS[1]); redis.call(ARGV[4], KEYS[2], ARGV[1]); return 1; end; return nil;"
	// A read lock that also expires a key it computes: which expiry is the
	// lock's cannot be told.
	computedExpiry = "redis.call('hset', KEYS[1], 'mode', 'read'); local t = KEYS[1] .. ':timeout'; " +
		"redis.call('pexpire', t, ARGV[1]); redis.call('pexpire', KEYS[1], ARGV[1]);"
	// A local bound to itself must not send the reader round in circles.
	selfLocal = "local ttl = tonumber(ttl)\nredis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ttl)"
	// python-redis-lock's release: it deletes the lock and signals waiters
	// on a second key, which it expires.
	signalRelease = `if redis.call("get", KEYS[1]) ~= ARGV[1] then return 1 else
redis.call("del", KEYS[2]) redis.call("lpush", KEYS[2], 1) redis.call("pexpire", KEYS[2], ARGV[2]) redis.call("del", KEYS[1]) return 0 end`
	// Two keys written: which one is the lock cannot be told.
	twoKeys = `redis.call('set', KEYS[1], ARGV[1], 'nx'); redis.call('incr', KEYS[2]); redis.call('hset', KEYS[2], 'f', 1)`
	// Two expiries that disagree: the lease cannot be told.
	twoLeases = `redis.call('hset', KEYS[1], 'o', ARGV[1]); redis.call('pexpire', KEYS[1], 1000); redis.call('pexpire', KEYS[1], 2000)`
)

func TestRedis(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name string
		args []string
		want want
	}{
		{"redis-py Lock", []string{"SET", "lock:orders:KEY", "tok", "PX", "1000", "NX"}, want{true, "lock:orders:KEY", 1000 * ms, Data, false}},
		{"go-redis SetNX whole seconds (redsync, bsm)", []string{"set", "KEY", "tok", "ex", "1", "nx"}, want{true, "KEY", time.Second, Data, false}},
		{"Laravel RedisLock", []string{"set", "laravel_database_KEY", "owner", "EX", "10", "NX"}, want{true, "laravel_database_KEY", 10 * time.Second, Data, false}},
		{"python-redis-lock", []string{"SET", "lock:KEY", "Xw3xSLxkKD1", "EX", "60", "NX"}, want{true, "lock:KEY", time.Minute, Data, false}},
		{"SET NX without expiry (redis-py, no timeout)", []string{"SET", "KEY", "tok", "NX"}, want{true, "KEY", 0, Data, false}},
		{"SET NX PXAT: absolute, no lease", []string{"SET", "KEY", "tok", "NX", "PXAT", "1764260000000"}, want{true, "KEY", 0, Data, false}},
		{"SETNX (old recipe)", []string{"SETNX", "lock.KEY", "1764260001"}, want{true, "lock.KEY", 0, Data, false}},
		{"EXPIRE after SETNX", []string{"EXPIRE", "lock.KEY", "10"}, want{true, "lock.KEY", 10 * time.Second, Unknown, true}},
		{"PEXPIRE", []string{"pexpire", "KEY", "1500"}, want{true, "KEY", 1500 * ms, Unknown, true}},
		{"Redisson tryLock", []string{"EVAL", redissonLock, "1", "KEY", "30000", "8743c9c0:1"}, want{true, "KEY", 30 * time.Second, Data, false}},
		{"Redisson renewal", []string{"EVAL", redissonRenew, "1", "KEY", "30000", "8743c9c0:1"}, want{true, "KEY", 30 * time.Second, Unknown, true}},
		{"Symfony RedisStore save", []string{"EVAL", symfonySave, "1", "sf:KEY", "1764260000000", "tok", "300000"}, want{true, "sf:KEY", 300 * time.Second, Data, false}},
		{"SET NX PX in a script", []string{"EVAL", setScript, "1", "KEY", "tok", "1000"}, want{true, "KEY", 1000 * ms, Data, false}},
		{"EVALSHA: its key alone", []string{"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff831", "1", "KEY", "tok", "1000"}, want{true, "KEY", 0, Unknown, false}},
		{"two expiries disagree: no lease", []string{"EVAL", twoLeases, "1", "KEY", "tok"}, want{true, "KEY", 0, Data, false}},
		{"an expiry of a computed key: no lease", []string{"EVAL", computedExpiry, "1", "KEY", "1000"}, want{true, "KEY", 0, Data, false}},
		{"a local bound to itself", []string{"EVAL", selfLocal, "1", "KEY", "tok"}, want{true, "KEY", 0, Data, false}},
		// What must not be learned.
		{"Redisson unlock", []string{"EVAL", redissonUnlock, "2", "KEY", "redisson_lock__channel:{KEY}", "0", "30000", "8743c9c0:1", "PUBLISH"}, want{}},
		{"python-redis-lock release", []string{"EVAL", signalRelease, "2", "lock:KEY", "lock-signal:KEY", "Xw3xSLxkKD1", "100"}, want{}},
		{"BLPOP of a waiter (python-redis-lock)", []string{"BLPOP", "lock-signal:KEY", "60"}, want{}},
		{"GET", []string{"GET", "KEY"}, want{}},
		{"DEL", []string{"DEL", "KEY"}, want{}},
		{"PTTL", []string{"PTTL", "KEY"}, want{}},
		{"SET without NX (the critical section)", []string{"SET", "orders:42", "paid"}, want{}},
		{"SET without NX with an expiry", []string{"SET", "cache:x", "v", "PX", "1000"}, want{}},
		{"SET XX PX (a renewal)", []string{"SET", "KEY", "tok", "XX", "PX", "1000"}, want{}},
		{"PEXPIREAT: absolute", []string{"PEXPIREAT", "KEY", "1764260000000"}, want{}},
		{"release script", []string{"EVAL", releaseScript, "1", "KEY", "tok"}, want{}},
		{"redis-py extend", []string{"EVAL", extendScript, "1", "KEY", "tok", "1000", "1"}, want{}},
		{"a script writing two keys", []string{"EVAL", twoKeys, "2", "KEY", "fence:KEY", "tok"}, want{}},
		{"EVALSHA of two keys", []string{"EVALSHA", "e0e1f9fa", "2", "KEY", "fence", "tok"}, want{}},
		{"EVAL with too few keys", []string{"EVAL", setScript, "3", "KEY"}, want{}},
		{"PING", []string{"PING"}, want{}},
	}
	for _, c := range cases {
		f, ok := Redis(c.args)
		check(t, c.name, f, ok, c.want)
	}
}

func TestRedisFrom(t *testing.T) {
	f, _ := Redis([]string{"SET", "lock:x", "a-long-random-token", "NX", "PX", "1000"})
	if got, want := f.String(), "key lock:x, lease 1000 ms, data (from SET lock:x … NX PX 1000)"; got != want {
		t.Errorf("String: %q, want %q", got, want)
	}
	f, _ = Redis([]string{"EVAL", redissonLock, "1", "KEY", "30000", "id:1"})
	if !strings.HasPrefix(f.From, "EVAL if ((redis.call('exists', KEYS[1]) == 0)… 1 KEY") || len(f.From) > 130 {
		t.Errorf("From of a script: %q", f.From)
	}
}

func TestStrings(t *testing.T) {
	for _, c := range []struct {
		f    Footprint
		want string
	}{
		{first(Memcached([]string{"add", "KEY", "0", "2", "16"})), "key KEY, lease 1000–2000 ms, data (from add KEY 0 2 16)"},
		{first(SQL("SELECT pg_try_advisory_lock(hashtext('KEY'))", nil)), "key hashtext('KEY'), session (from SELECT pg_try_advisory_lock(hashtext('KEY')))"},
		{first(SQL("INSERT INTO locklab.locks (name, owner, expires_at) VALUES ('KEY', 'c0-1', NOW(3) + INTERVAL 1000000 MICROSECOND)", nil)),
			"key KEY, lease 1000 ms, data (from INSERT INTO locklab.locks (name, owner, expires_at) VALUES ('KEY', 'c0-1', NOW(3) + INTERVAL 1000000 MICROSECOND))"},
		{first(ZooKeeper("create", "/locks/KEY/u__lock__", 3)), "key /locks/KEY, session (from create /locks/KEY/u__lock__ (ephemeral sequential))"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("String:\n got %q\nwant %q", got, c.want)
		}
	}
}

// first is a reader's footprint, its ok dropped.
func first(f Footprint, _ bool) Footprint { return f }

func TestSQL(t *testing.T) {
	sha := sha256.Sum256([]byte("KEY"))
	hashed := hex.EncodeToString(sha[:])
	cases := []struct {
		name   string
		query  string
		params []string
		want   want
	}{
		{"GET_LOCK (PDO, emulated prepare)", "SELECT GET_LOCK('KEY', 0)", nil, want{true, "KEY", 0, Session, false}},
		{"GET_LOCK with parameters", "SELECT GET_LOCK(?, ?)", []string{"lock:KEY", "5"}, want{true, "lock:KEY", 0, Session, false}},
		{"pg_try_advisory_lock(hashtext) (psycopg2)", "SELECT pg_try_advisory_lock(hashtext('KEY'))", nil, want{true, "hashtext('KEY')", 0, Session, false}},
		{"prooph's advisory lock, spaced, with a semicolon", "select pg_advisory_lock( hashtext('KEY') );", nil, want{true, "hashtext('KEY')", 0, Session, false}},
		{"pg_advisory_lock of a number", "select pg_advisory_lock(4242)", nil, want{true, "4242", 0, Session, false}},
		{"pg_advisory_xact_lock with $1", "SELECT pg_advisory_xact_lock($1)", []string{"77"}, want{true, "77", 0, Session, false}},
		{"pg_try_advisory_lock of two keys", "SELECT pg_try_advisory_lock(1, 2)", nil, want{true, "1,2", 0, Session, false}},
		{"SELECT … FOR UPDATE", "SELECT owner FROM locks WHERE name = 'KEY' FOR UPDATE", nil, want{true, "KEY", 0, Session, false}},
		{"SELECT … FOR UPDATE with a parameter", "SELECT 1 FROM locks WHERE name = $1 FOR UPDATE NOWAIT", []string{"KEY"}, want{true, "KEY", 0, Session, false}},
		{"unique row, MariaDB (mariadb-row.sh)", "INSERT INTO locklab.locks (name, owner, expires_at) VALUES ('KEY', 'c0-1', NOW(3) + INTERVAL 1000000 MICROSECOND)", nil,
			want{true, "KEY", time.Second, Data, false}},
		{"unique row, PostgreSQL (pgrow.sh)", "INSERT INTO locklab.locks (name, owner, expires_at) VALUES ('KEY', 'c0-1', now() + interval '1000 milliseconds') ON CONFLICT (name) DO NOTHING RETURNING id", nil,
			want{true, "KEY", time.Second, Data, false}},
		{"Symfony PdoStore, MySQL", "INSERT INTO lock_keys (key_id, key_token, key_expiration) VALUES ('" + hashed + "', 'tok', UNIX_TIMESTAMP() + 300)", nil,
			want{true, hashed, 300 * time.Second, Data, false}},
		{"Symfony PdoStore, PostgreSQL, bound", "INSERT INTO lock_keys (key_id, key_token, key_expiration) VALUES ($1, $2, CAST(EXTRACT(epoch FROM NOW()) AS INT) + 300)", []string{hashed, "tok"},
			want{true, hashed, 300 * time.Second, Data, false}},
		{"Symfony PdoStore putOffExpiration", "UPDATE lock_keys SET key_expiration = UNIX_TIMESTAMP() + 300, key_token = 'tok' WHERE key_id = '" + hashed + "' AND (key_token = 'tok' OR key_expiration <= UNIX_TIMESTAMP())", nil,
			want{true, hashed, 300 * time.Second, Data, false}},
		{"absolute expiry from the program's clock (ShedLock)", "INSERT INTO shedlock(name, lock_until, locked_at, locked_by) VALUES(?, ?, ?, ?)", []string{"KEY", "2026-11-27 18:00:01.000", "2026-11-27 18:00:00.000", "host"},
			want{true, "KEY", 0, Data, false}},
		{"the database's clock plus a bound interval", "UPDATE shedlock SET lock_until = timezone('utc', CURRENT_TIMESTAMP) + cast(? as interval), locked_by = ? WHERE name = ? AND lock_until <= timezone('utc', CURRENT_TIMESTAMP)",
			[]string{"30000 milliseconds", "host", "KEY"}, want{true, "KEY", 30 * time.Second, Data, false}},
		{"DATE_ADD", "REPLACE INTO locks (lock_name, until) VALUES ('KEY', DATE_ADD(NOW(), INTERVAL 5 SECOND))", nil, want{true, "KEY", 5 * time.Second, Data, false}},
		{"TIMESTAMPADD", "INSERT IGNORE INTO locks (name, expires) VALUES ('KEY', TIMESTAMPADD(SECOND, 2, NOW()))", nil, want{true, "KEY", 2 * time.Second, Data, false}},
		{"a transaction in one query (psql -c)", "BEGIN; SELECT * FROM locks WHERE name = 'KEY' FOR UPDATE; -- held till COMMIT", nil, want{true, "KEY", 0, Session, false}},
		{"a comment first (sqlcommenter)", "/* app=orders */ SELECT GET_LOCK('KEY', 10)", nil, want{true, "KEY", 0, Session, false}},
		{"GET_LOCK of an expression", "SELECT GET_LOCK(CONCAT('lock:', 'KEY'), 0)", nil, want{true, "CONCAT('lock:', 'KEY')", 0, Session, false}},
		{"GET_LOCK unbound", "SELECT GET_LOCK(?, 0)", nil, want{true, "", 0, Session, false}},
		{"advisory lock of a nested expression", "SELECT pg_try_advisory_lock(hashtext(concat('a:', 'KEY')))", nil, want{true, "hashtext(concat('a:','KEY'))", 0, Session, false}},
		{"a name beside a row number", "INSERT INTO locks (id, name, expires_at) VALUES (7, 'KEY', NOW() + INTERVAL 1 SECOND)", nil, want{true, "KEY", time.Second, Data, false}},
		{"name unknown: a placeholder unbound", "INSERT INTO locks (name, expires_at) VALUES (?, NOW() + INTERVAL 1 SECOND)", nil, want{true, "", time.Second, Data, false}},
		// What must not be learned.
		{"RELEASE_LOCK", "SELECT RELEASE_LOCK('KEY')", nil, want{}},
		{"pg_advisory_unlock", "SELECT pg_advisory_unlock(hashtext('KEY'))", nil, want{}},
		{"DELETE of the row", "DELETE FROM locks WHERE name = 'KEY' AND owner = 'c0-1'", nil, want{}},
		{"a plain SELECT of the row", "SELECT owner, expires_at FROM locks WHERE name = 'KEY'", nil, want{}},
		{"an UPDATE without expiry (critical section)", "UPDATE accounts SET balance = balance - 1 WHERE id = 3", nil, want{}},
		{"an INSERT without expiry", "INSERT INTO audit (name, at) VALUES ('KEY', NOW())", nil, want{}},
		{"COMMIT", "COMMIT", nil, want{}},
	}
	for _, c := range cases {
		f, ok := SQL(c.query, c.params)
		check(t, c.name, f, ok, c.want)
	}
}

func TestMemcached(t *testing.T) {
	cases := []struct {
		name  string
		words []string
		want  want
	}{
		{"add (pymemcache, Laravel)", []string{"add", "KEY", "0", "2", "16"}, want{true, "KEY", 2 * time.Second, Data, false}},
		{"add noreply", []string{"add", "lock_KEY", "0", "30", "5", "noreply"}, want{true, "lock_KEY", 30 * time.Second, Data, false}},
		{"add without expiry", []string{"add", "KEY", "0", "0", "5"}, want{true, "KEY", 0, Data, false}},
		{"add with an absolute expiry", []string{"add", "KEY", "0", "1764260000", "5"}, want{true, "KEY", 0, Data, false}},
		{"meta add", []string{"ms", "KEY", "5", "T3", "ME", "q"}, want{true, "KEY", 3 * time.Second, Data, false}},
		{"touch", []string{"touch", "KEY", "10"}, want{true, "KEY", 10 * time.Second, Unknown, true}},
		{"gat", []string{"gat", "10", "KEY"}, want{true, "KEY", 10 * time.Second, Unknown, true}},
		{"meta get with a TTL", []string{"mg", "KEY", "v", "T10"}, want{true, "KEY", 10 * time.Second, Unknown, true}},
		// What must not be learned.
		{"set", []string{"set", "KEY", "0", "2", "16"}, want{}},
		{"cas release (memcached-add.py)", []string{"cas", "KEY", "0", "-1", "16", "42"}, want{}},
		{"gets", []string{"gets", "KEY"}, want{}},
		{"delete", []string{"delete", "KEY"}, want{}},
		{"meta set, not an add", []string{"ms", "KEY", "5", "T3"}, want{}},
		{"add already expired", []string{"add", "KEY", "0", "-1", "5"}, want{}},
	}
	for _, c := range cases {
		f, ok := Memcached(c.words)
		check(t, c.name, f, ok, c.want)
		if ok && f.Lease > 0 && f.Slack != time.Second {
			t.Errorf("%s: slack %v, want 1s", c.name, f.Slack)
		}
	}
}

func TestZooKeeper(t *testing.T) {
	cases := []struct {
		name, op, path string
		flags          int32
		want           want
	}{
		{"kazoo Lock", "create", "/locks/KEY/5d9a3ec8f1b24f6c9f0e7f0b3c1d2e4a__lock__", 3, want{true, "/locks/KEY", 0, Session, false}},
		{"Curator InterProcessMutex (protected)", "create2", "/locks/KEY/_c_4bd5c4f2-8e0e-4a8e-9d1a-5b0f0a8e9c11-lock-", 3, want{true, "/locks/KEY", 0, Session, false}},
		{"Symfony ZookeeperStore", "create", "/KEY", ZKEphemeral, want{true, "/KEY", 0, Session, false}},
		// What must not be learned.
		{"ensure_path: a persistent parent", "create", "/locks/KEY", 0, want{}},
		{"a container parent", "createContainer", "/locks/KEY", 4, want{}},
		{"a persistent sequential node", "create", "/queue/item-", ZKSequential, want{}},
		{"getChildren", "getChildren2", "/locks/KEY", 0, want{}},
		{"delete", "delete", "/locks/KEY/x__lock__0000000003", 0, want{}},
	}
	for _, c := range cases {
		f, ok := ZooKeeper(c.op, c.path, c.flags)
		check(t, c.name, f, ok, c.want)
	}
}

// zkCreateBody is a create request's body as jute writes it.
func zkCreateBody(path string, data []byte, flags int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(path)))
	b = append(b, path...)
	if data == nil {
		b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
	} else {
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		b = append(b, data...)
	}
	b = binary.BigEndian.AppendUint32(b, 1)    // one ACL
	b = binary.BigEndian.AppendUint32(b, 0x1f) // all permissions
	for _, s := range []string{"world", "anyone"} {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return binary.BigEndian.AppendUint32(b, uint32(flags))
}

func TestZooKeeperWire(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("host-1")} {
		p, flags, ok := ZooKeeperCreate(zkCreateBody("/locks/KEY/x__lock__", data, 3))
		if !ok || p != "/locks/KEY/x__lock__" || flags != 3 {
			t.Errorf("ZooKeeperCreate: %q %d %v", p, flags, ok)
		}
	}
	if _, _, ok := ZooKeeperCreate(zkCreateBody("/x", nil, 1)[:9]); ok {
		t.Error("ZooKeeperCreate read a cut body")
	}
	reply := binary.BigEndian.AppendUint32(nil, 36)           // length
	reply = binary.BigEndian.AppendUint32(reply, 0)           // protocol version
	reply = binary.BigEndian.AppendUint32(reply, 4000)        // negotiated timeout
	reply = binary.BigEndian.AppendUint64(reply, 0x1000a2b3c) // session id
	if d, ok := ZooKeeperConnectReply(reply); !ok || d != 4*time.Second {
		t.Errorf("ZooKeeperConnectReply: %v %v", d, ok)
	}
}

func TestEtcdPut(t *testing.T) {
	cases := []struct {
		name  string
		key   string
		lease int64
		want  want
	}{
		{"python-etcd3 Lock", "/locks/KEY", 7587862072907215652, want{true, "/locks/KEY", 0, Session, false}},
		{"concurrency.Mutex (etcd-lease.py)", "/locklab/KEY/694d7a1c2b3e4f01", 0x694d7a1c2b3e4f01, want{true, "/locklab/KEY", 0, Session, false}},
		{"a put without a lease", "/config/x", 0, want{}},
	}
	for _, c := range cases {
		f, ok := EtcdPut(c.key, c.lease)
		check(t, c.name, f, ok, c.want)
	}
}

// learn feeds a Learner what the readers show of requests.
func learn(l *Learner, fs ...func() (Footprint, bool)) {
	for _, f := range fs {
		if fp, ok := f(); ok {
			l.Add(fp)
		}
	}
}

func redis(args ...string) func() (Footprint, bool) {
	return func() (Footprint, bool) { return Redis(args) }
}
func sql(q string) func() (Footprint, bool)   { return func() (Footprint, bool) { return SQL(q, nil) } }
func fp(f Footprint) func() (Footprint, bool) { return func() (Footprint, bool) { return f, true } }

func TestLearner(t *testing.T) {
	t.Run("SETNX then EXPIRE", func(t *testing.T) {
		var l Learner
		for range 3 { // three acquires
			learn(&l, redis("SETNX", "lock:KEY", "1"), redis("GET", "lock:KEY"), redis("EXPIRE", "lock:KEY", "2"))
		}
		f := l.Footprint()
		if f.Key != "lock:KEY" || f.Lease != 2*time.Second || f.Kind != Data || len(l.Ambiguous()) != 0 {
			t.Fatalf("%+v %v", f, l.Ambiguous())
		}
		if got, want := f.String(), "key lock:KEY, data (from SETNX lock:KEY …), lease 2000 ms (from EXPIRE lock:KEY 2)"; got != want {
			t.Errorf("String %q, want %q", got, want)
		}
	})
	t.Run("another key's expiry is not the lock's", func(t *testing.T) {
		var l Learner
		learn(&l, redis("SET", "KEY", "t", "NX", "PX", "1000"), redis("PEXPIRE", "fence:KEY", "60000"))
		if f := l.Footprint(); f.Lease != time.Second || len(l.Ambiguous()) != 0 {
			t.Errorf("%+v %v", f, l.Ambiguous())
		}
	})
	t.Run("an expiry seen before the take", func(t *testing.T) {
		var l Learner
		learn(&l, redis("PEXPIRE", "KEY", "700"), redis("SETNX", "KEY", "t"))
		if f := l.Footprint(); f.Key != "KEY" || f.Lease != 700*time.Millisecond {
			t.Errorf("%+v", f)
		}
	})
	t.Run("leases that contradict", func(t *testing.T) {
		var l Learner
		learn(&l, redis("SET", "KEY", "t", "NX", "PX", "1000"), redis("SET", "KEY", "t", "NX", "PX", "2000"), redis("SET", "KEY", "t", "NX", "PX", "1000"))
		f := l.Footprint()
		if f.Key != "KEY" || f.Lease != 0 || f.Kind != Data || len(l.Ambiguous()) != 1 || !strings.HasPrefix(l.Ambiguous()[0], "lease: 1000 ms") {
			t.Errorf("%+v %q", f, l.Ambiguous())
		}
	})
	t.Run("keys that contradict", func(t *testing.T) {
		var l Learner
		learn(&l, redis("SET", "a:KEY", "t", "NX", "PX", "1000"), redis("SET", "b:KEY", "t", "NX", "PX", "1000"))
		f := l.Footprint()
		if f.Key != "" || f.Lease != 0 || f.Kind != Data || len(l.Ambiguous()) != 1 || !strings.HasPrefix(l.Ambiguous()[0], "key: a:KEY") {
			t.Errorf("%+v %q", f, l.Ambiguous())
		}
	})
	t.Run("kinds that contradict", func(t *testing.T) {
		var l Learner
		learn(&l, sql("SELECT GET_LOCK('KEY', 0)"), sql("INSERT INTO locks (name, expires_at) VALUES ('KEY', NOW() + INTERVAL 1 SECOND)"))
		f := l.Footprint()
		if f.Key != "KEY" || f.Kind != Unknown || len(l.Ambiguous()) != 1 || !strings.HasPrefix(l.Ambiguous()[0], "kind: session") {
			t.Errorf("%+v %q", f, l.Ambiguous())
		}
	})
	t.Run("a ZooKeeper session's timeout is its ephemeral node's lease", func(t *testing.T) {
		var l Learner
		learn(&l, fp(ZooKeeperSession(4*time.Second)),
			func() (Footprint, bool) { return ZooKeeper("create", "/locks/KEY", 0) },
			func() (Footprint, bool) { return ZooKeeper("create", "/locks/KEY/u1__lock__", 3) },
			func() (Footprint, bool) { return ZooKeeper("create", "/locks/KEY/u2__lock__", 3) })
		f := l.Footprint()
		if f.Key != "/locks/KEY" || f.Lease != 4*time.Second || f.Kind != Session || len(l.Ambiguous()) != 0 {
			t.Errorf("%+v %v", f, l.Ambiguous())
		}
		if !strings.Contains(f.String(), "lease 4000 ms (from connect: session timeout 4000 ms)") {
			t.Errorf("String %q", f.String())
		}
	})
	t.Run("an etcd lease's TTL", func(t *testing.T) {
		var l Learner
		learn(&l, fp(EtcdGrant(5*time.Second)), func() (Footprint, bool) { return EtcdPut("/locks/KEY", 0x2a) })
		if f := l.Footprint(); f.Key != "/locks/KEY" || f.Lease != 5*time.Second || f.Kind != Session {
			t.Errorf("%+v", f)
		}
	})
	t.Run("a session's lease is no data lock's", func(t *testing.T) {
		var l Learner
		learn(&l, fp(ZooKeeperSession(4*time.Second)), redis("SET", "KEY", "t", "NX"))
		if f := l.Footprint(); f.Lease != 0 || f.Kind != Data {
			t.Errorf("%+v", f)
		}
	})
	t.Run("nothing", func(t *testing.T) {
		var l Learner
		learn(&l, redis("GET", "KEY"))
		if got := l.Footprint().String(); got != "nothing learned" {
			t.Errorf("%q", got)
		}
	})
}

func TestMatches(t *testing.T) {
	sha := sha256.Sum256([]byte("KEY"))
	cases := []struct {
		key, lockKey string
		want         bool
	}{
		{"KEY", "KEY", true},
		{"lock:orders:KEY", "KEY", true},
		{"KEY.lock", "KEY", true},
		{"/locks/KEY/lock-0000000003", "KEY", true},
		{"/locks/KEY", "KEY", true},
		{"hashtext('KEY')", "KEY", true},
		{"laravel_database_KEY", "KEY", true},
		{hex.EncodeToString(sha[:]), "KEY", true},
		{"(hashtext('KEY')::bigint)", "KEY", true},
		{strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte("KEY"))), 10), "KEY", true},
		{"4242", "KEY", false},
		{"KEYS", "KEY", false},
		{"xKEY", "KEY", false},
		{"lock:k10", "k1", false},
		{"lock:k10:k1", "k1", true},
		{"", "KEY", false},
		{"KEY", "", false},
	}
	for _, c := range cases {
		if got := Matches(c.key, c.lockKey); got != c.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.key, c.lockKey, got, c.want)
		}
	}
}

// TestNoPanic feeds every reader cut and odd requests: each must answer,
// never panic.
func TestNoPanic(t *testing.T) {
	texts := []string{redissonLock, symfonySave, setScript, extendScript, twoKeys,
		"INSERT INTO locks (name, expires_at) VALUES ('KEY', NOW() + INTERVAL 1 SECOND)",
		"UPDATE t SET a = 'x;y', b = NOW() + INTERVAL 1 SECOND WHERE name = 'K' -- c", "SELECT GET_LOCK('", "/* x", "' unterminated"}
	for _, text := range texts {
		for i := range len(text) + 1 {
			s := text[:i]
			SQL(s, []string{"a", "1"})
			RedisScript(s, []string{"k"}, []string{"1"})
			Redis([]string{"EVAL", s, "1", "k", "1"})
			Redis(strings.Fields(s))
			Memcached(strings.Fields(s))
			ZooKeeperCreate([]byte(s))
			ZooKeeperConnectReply([]byte(s))
		}
	}
	for _, words := range [][]string{{"ms", "k", "1"}, {"gat", "1"}, {"set", "k", "v", "px"}, {"evalsha", "", "1", "k"}, {"add", "k"}, {"mg", "k", "T"}} {
		Redis(words)
		Memcached(words)
	}
}

// TestNowPlus reads the expiries rows are written with: the server's now
// plus a constant is a lease; anything else is not.
func TestNowPlus(t *testing.T) {
	for _, c := range []struct {
		expr string
		want time.Duration
		ok   bool
	}{
		{"now() + '5 seconds'::interval", 5 * time.Second, true},
		{"NOW() + INTERVAL '5' SECOND", 5 * time.Second, true},
		{"now() + make_interval(secs => 5)", 5 * time.Second, true},
		{"current_timestamp + interval '2 minutes'", 2 * time.Minute, true},
		{"date_add(now(), interval 1500 microsecond)", 1500 * time.Microsecond, true},
		{"UNIX_TIMESTAMP(NOW()) + 30", 30 * time.Second, true},
		{"extract(epoch from now()) + 30", 30 * time.Second, true},
		{"now() + interval '1 hour'", time.Hour, true},
		{"NOW(6) + INTERVAL 0.5 SECOND", 0, false}, // a fraction: not told
		{"NOW()", 0, false},
		{"now() - interval '5 seconds'", 0, false},
		{"'2026-11-27 18:00:01'", 0, false},
	} {
		if d, ok := nowPlus(c.expr); d != c.want || ok != c.ok {
			t.Errorf("nowPlus(%q) = %v, %v; want %v, %v", c.expr, d, ok, c.want, c.ok)
		}
	}
}
