// Package locks is the one registry of locks: every lock locklab can judge,
// by name, with its constructor. The correct designs are package
// reference's and each lock service's, the broken ones package broken's,
// the adapted libraries package libraries's; a pitfall's lock that is a
// correct design used wrongly is registered under the pitfall's name
// (no-renewal, non-reentrant), with the use that is wrong (Nested). The
// catalogue (package pitfalls) names its locks as this registry does.
// The CLI's -lock flag, `check list` and `check explore` look them up here;
// a name exec:COMMAND is a lock program in any language (package program).
package locks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/broken"
	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/libraries"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/program"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/service/etcd"
	"github.com/locklab/locklab/service/memcached"
	"github.com/locklab/locklab/service/sqldb"
	"github.com/locklab/locklab/service/zookeeper"
)

// Lock is one named lock.
type Lock struct {
	Name       string
	About      string // one sentence: what it is
	Topologies []cluster.Topology
	New        harness.NewLocker
	// Nested says callers take this lock again while holding it, so it is
	// judged under a workload that nests its critical sections.
	Nested bool
	// Reference names the correct lock of this one's kind that it is
	// measured against, where the topology's (reference.For) is of
	// another kind: a lock held by a connection's session is measured
	// against one that is too, since a dropped connection costs every
	// such lock its hold, and a row lock none. "" means the topology's.
	Reference string
	// Program says the lock is a lock program (exec:COMMAND), whose
	// reference is chosen by the kind of hold its own requests show
	// (ReferenceOfKind), since its name says nothing of it.
	Program bool
}

// Kinds of lock, as `check list` groups them.
const (
	GroupBroken  = "broken"  // a lock with a bug of its own, which a pitfall of the catalogue shows
	GroupCorrect = "correct" // a correct lock, whose failures are inherent to its kind
	GroupLibrary = "library" // a third-party library's lock (package libraries)
)

// Group says whether l is broken, correct or a library's.
func (l Lock) Group() string {
	if _, ok := l.Bug(); ok {
		return GroupBroken
	}
	if slices.ContainsFunc(libraries.All(), func(lib libraries.Lock) bool { return lib.Name == l.Name }) {
		return GroupLibrary
	}
	return GroupCorrect
}

// Bug is the catalogue's pitfall that shows l has a bug of its own: one
// whose broken lock l is and whose failure is own. A lock whose pitfall
// fails it inherently (etcd's mutex paused past its lease) is correct.
func (l Lock) Bug() (pitfalls.Pitfall, bool) {
	for _, p := range pitfalls.Catalogue() {
		if p.Broken == l.Name && p.Kind == checker.Own {
			return p, true
		}
	}
	return pitfalls.Pitfall{}, false
}

var (
	single     = []cluster.Topology{cluster.Single}
	oneMaster  = []cluster.Topology{cluster.Single, cluster.Replicated}
	replicated = []cluster.Topology{cluster.Replicated}
	redlock    = []cluster.Topology{cluster.Redlock}
	sqlServer  = []cluster.Topology{cluster.MariaDBTopology, cluster.PostgresTopology}
	postgres   = []cluster.Topology{cluster.PostgresTopology}
	mariadb    = []cluster.Topology{cluster.MariaDBTopology} // MySQL's own SQL: GET_LOCK, INSERT IGNORE, the MariaDB inventory
	// etcdTopo, zkTopo, memcachedTopo: etcd, zookeeper and memcached are
	// the services' packages.
	etcdTopo      = []cluster.Topology{cluster.EtcdTopology}
	zkTopo        = []cluster.Topology{cluster.ZooKeeperTopology}
	memcachedTopo = []cluster.Topology{cluster.MemcachedTopology}
)

// All lists every lock: the catalogue's broken locks in ladder order, then
// the correct ones, then the libraries.
func All() []Lock {
	all := []Lock{
		{Name: "in-process", Topologies: single, New: broken.NewInProcess,
			About: "A mutex inside each client, as seed 003's ReentrantLock: nothing is shared between processes."},
		{Name: "setnx-expire", Topologies: single, New: broken.NewSetnxExpire,
			About: "SETNX, then EXPIRE as a second command; released with DEL."},
		{Name: "getset-timestamp", Topologies: single, New: broken.NewGetsetTimestamp,
			About: "The expiry time by the client's clock in the value, taken over with GETSET."},
		{Name: "no-ttl", Topologies: single, New: broken.NewNoTTL,
			About: "SET NX without any expiry."},
		{Name: "no-release", Topologies: single, New: broken.NewNoRelease,
			About: "SET NX PX, never released: waiters wait for the TTL."},
		{Name: "del-release", Topologies: single, New: broken.NewDelRelease,
			About: "SET NX PX, released with a plain DEL."},
		{Name: "get-then-del", Topologies: single, New: broken.NewGetThenDel,
			About: "SET NX PX, released with GET, compare, then DEL: two commands."},
		{Name: "no-renewal", Topologies: single, New: reference.NewTokenLock,
			About: "The token lock (SET NX PX, Lua release) with a fixed TTL, under work that can outlive it."},
		{Name: "non-reentrant", Topologies: single, New: reference.NewWatchdogLock, Nested: true,
			About: "The token lock with a watchdog, taken again by code that already holds it."},
		{Name: "row-no-expiry", Topologies: sqlServer, New: broken.NewRowNoExpiry,
			About: "A row with a unique name (MariaDB or PostgreSQL): INSERT to acquire, DELETE to release, no expiry (seed 001 §1)."},
		{Name: "row-cleanup", Topologies: sqlServer, New: sqldb.NewUniqueRowLockLeased,
			About: "The unique row with an expiry; each acquire first deletes an expired row (the seed's cleanup job)."},
		{Name: "for-update", Topologies: mariadb, Reference: "for-update", New: reference.NewForUpdateLock,
			About: "SELECT … FOR UPDATE on the key's row, the transaction left open on a pinned connection until COMMIT (seed 001 §2)."},
		{Name: "for-update-pool", Topologies: mariadb, Reference: "for-update-pool", New: reference.NewForUpdateLock,
			About: "The FOR UPDATE lock in a service whose requests share one pool: each waiter holds a pooled connection while it waits, the holder writes on another."},
		{Name: "get-lock-pool", Topologies: mariadb, Reference: "get-lock", New: broken.NewGetLockPool,
			About: "MariaDB's GET_LOCK and RELEASE_LOCK, each on whatever connection the client's pool hands out."},
		{Name: "get-lock", Topologies: mariadb, Reference: "get-lock", New: reference.NewGetLock,
			About: "MariaDB's GET_LOCK on a connection pinned from acquire to release."},
		{Name: "advisory-pool", Topologies: postgres, Reference: "advisory-pinned", New: broken.NewAdvisoryPool,
			About: "A PostgreSQL advisory lock (pg_try_advisory_lock) taken and released on the client's pool, each on whichever connection it hands out."},
		{Name: "etcd-mutex", Topologies: etcdTopo, New: etcd.NewMutex,
			About: "etcd's concurrency.Mutex: a key under the lock's prefix attached to a session's lease, the oldest key holds the lock."},
		{Name: "zk-lock", Topologies: zkTopo, New: zookeeper.NewLock,
			About: "go-zookeeper's Lock recipe: an ephemeral sequential node under the lock's parent, the lowest holds the lock, each waiter watches the one before it."},
		{Name: "memcached-get-delete", Topologies: memcachedTopo, New: broken.NewMemcachedGetDelete,
			About: "memcached: add with an expiry, released by get, compare, then a plain delete: two requests."},
		{Name: "memcached-one-second", Topologies: memcachedTopo, New: broken.NewMemcachedOneSecond,
			About: "memcached: add with an expiry of one second, renewed by cas, released by cas: the server's clock ticks in whole seconds."},
		{Name: "no-version-check", Topologies: mariadb, New: broken.NewNoLock,
			About: "No lock: every acquire succeeds at once, and the section writes the stock it computed unchecked."},

		{Name: "token", Topologies: oneMaster, New: reference.NewTokenLock,
			About: "SET key token NX PX ttl, released by a Lua compare-and-delete; no renewal."},
		{Name: "token-watchdog", Topologies: oneMaster, New: reference.NewWatchdogLock,
			About: "The token lock with a watchdog that renews the lease every TTL/3 with an owner-checked PEXPIRE."},
		{Name: "reentrant", Topologies: oneMaster, New: reference.NewReentrantLock, Nested: true,
			About: "A hash of owner → hold count changed by Lua scripts, with a watchdog (Redisson's design)."},
		{Name: "wait-replicas", Topologies: replicated, New: reference.NewWaitReplicasLock,
			About: "The reentrant lock, given back unless WAIT 1 says a replica has it."},
		{Name: "fenced", Topologies: oneMaster, New: reference.NewFencedLock,
			About: "The watchdog lock plus a fencing token from INCR, checked by the resource."},
		{Name: "redlock", Topologies: redlock, New: reference.NewRedlock,
			About: "Redlock over five masters: a majority within the validity time, per-node timeouts of TTL/10."},
		{Name: "fenced-redlock", Topologies: redlock, New: reference.NewFencedRedlock,
			About: "Redlock plus a fencing token from INCR on node 0, checked by the resource."},
		{Name: "fenced-row", Topologies: sqlServer, New: sqldb.NewUniqueRowLockFenced,
			About: "The unique row with an expiry and the cleanup, no watchdog; the row's AUTO_INCREMENT id fences the resource."},
		{Name: "unique-row", Topologies: sqlServer, New: sqldb.NewUniqueRowLock,
			About: "The unique row with an expiry and a watchdog that extends it every TTL/3 with an owner-checked UPDATE."},
		{Name: "for-update-tx", Topologies: mariadb, Reference: "for-update-tx", New: reference.NewForUpdateLockTx,
			About: "SELECT … FOR UPDATE whose lease carries its transaction: a MariaDB inventory is written in it and committed with the release."},
		{Name: "for-update-nowait", Topologies: mariadb, Reference: "for-update-nowait", New: reference.NewForUpdateLockNoWait,
			About: "SELECT … FOR UPDATE NOWAIT: a held row refuses at once, and the waiter gives its connection back before it tries again."},
		{Name: "get-lock-tx", Topologies: mariadb, Reference: "get-lock-tx", New: reference.NewGetLockTx,
			About: "GET_LOCK on a pinned connection whose lease carries a transaction on it, committed before RELEASE_LOCK."},
		{Name: "advisory-pinned", Topologies: postgres, Reference: "advisory-pinned", New: reference.NewAdvisoryPinned,
			About: "A PostgreSQL advisory lock held on one connection pinned from the pool (DB.Conn) from acquire to release."},
		{Name: "advisory-tx", Topologies: postgres, Reference: "advisory-tx", New: reference.NewAdvisoryTx,
			About: "PostgreSQL's pg_advisory_xact_lock in a transaction whose lease carries it: a PostgreSQL inventory is written in it, and COMMIT is the release."},
		{Name: "etcd-mutex-guarded", Topologies: etcdTopo, New: etcd.NewMutexGuarded,
			About: "etcd's concurrency.Mutex whose holder writes the stock (an etcd key) in a transaction guarded by its lock key."},
		{Name: "zk-fenced", Topologies: zkTopo, New: zookeeper.NewLockFenced,
			About: "go-zookeeper's Lock whose holder treats a lost session as a lost lock and fences the resource with its node's creation zxid (Czxid)."},
		{Name: "memcached-no-renewal", Topologies: memcachedTopo, New: memcached.NewLockNoRenewal,
			About: "memcached: the correct lock without its renewal: add with an expiry, released by a cas of the holder's own item."},
		{Name: "memcached", Topologies: memcachedTopo, New: memcached.NewLock,
			About: "memcached: add of the holder's token with an expiry of two seconds at least, renewed and released by a cas of the holder's own item."},
		{Name: "optimistic", Topologies: mariadb, New: reference.NewOptimistic,
			About: "Optimistic locking (seed 001 §3): no lock, every acquire succeeds at once; the write is made only if the stock is unchanged since it was read."},
	}
	for _, lib := range libraries.All() {
		all = append(all, Lock{Name: lib.Name, About: lib.About, Topologies: lib.Topologies, New: lib.New})
	}
	return all
}

// Tests are locks written for locklab's own tests as a user would write
// them, each with a bug a test must catch. Explore and the tests name them
// (Lookup); `check list`, the report and the comparison, which read All,
// do not offer them, as no user should pick one.
func Tests() []Lock {
	return []Lock{
		{Name: "redlock-no-elapsed", Topologies: []cluster.Topology{cluster.Redlock}, New: broken.NewRedlockNoElapsed,
			About: "Redlock without its clock: SET NX PX on every node in turn, a lease with any majority however long the acquire took."},
	}
}

// Lookup finds a lock by name, in All or Tests. A name exec:COMMAND is the lock program
// run by COMMAND (package program), on any topology, single first: a
// program names nothing, so the user says which service it is for.
func Lookup(name string) (Lock, error) {
	if command, ok := strings.CutPrefix(name, program.Prefix); ok {
		if err := program.Check(command); err != nil {
			return Lock{}, err
		}
		return Lock{Name: programName(command), Topologies: cluster.Topologies(), Program: true,
			New: program.New(command), About: "The lock program `" + command + "`, spoken to over locklab's line protocol."}, nil
	}
	for _, l := range append(All(), Tests()...) {
		if l.Name == name {
			return l, nil
		}
	}
	return Lock{}, fmt.Errorf("unknown lock %q (see `check list`)", name)
}

// programName names the lock program run by command in a way that can
// name a report folder: exec-, then the command's words joined by dashes.
// A name cut to its first 50 characters ends in a hash of the whole
// command, so that two commands that differ only past the cut (their
// arguments, after a long path) name two folders.
func programName(command string) string {
	name := strings.Join(strings.FieldsFunc(command, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}), "-")
	if len(name) > 60 {
		sum := sha256.Sum256([]byte(command))
		name = name[:50] + "-" + hex.EncodeToString(sum[:])[:8]
	}
	return "exec-" + name
}

// Reference is the correct lock another lock is measured against on
// topology t, as reference.For chooses it (the lock runner.Run
// compares with when Options.Reference is nil): the watchdog token lock on
// one master, Redlock on five, and the reentrant lock where critical
// sections nest on one master.
func Reference(t cluster.Topology, nested bool) Lock {
	name, _ := reference.For(t, nested)
	l, err := Lookup(name)
	if err != nil {
		panic(err) // reference.For names locks that are in All
	}
	return l
}

// ReferenceOfKind chooses, on topology t, the correct lock whose hold
// lives where a lock's does (runner.Options.ReferenceOf): on the SQL
// services a session's (GET_LOCK, a pinned advisory lock) or a row's (the
// unique row with its watchdog); elsewhere every lock of the service holds
// alike, and the topology's reference serves.
func ReferenceOfKind(t cluster.Topology, nested bool) func(footprint.Kind) harness.NewLocker {
	return func(kind footprint.Kind) harness.NewLocker {
		name := ""
		switch {
		case t == cluster.MariaDBTopology && kind == footprint.Session:
			name = "get-lock"
		case t == cluster.PostgresTopology && kind == footprint.Session:
			name = "advisory-pinned"
		case (t == cluster.MariaDBTopology || t == cluster.PostgresTopology) && kind == footprint.Data:
			name = "unique-row"
		default:
			return Reference(t, nested).New
		}
		l, err := Lookup(name)
		if err != nil {
			panic(err) // the names above are in All
		}
		return l.New
	}
}

// ReferenceOn is the lock l is measured against on topology t: the lock
// its Reference names, else the topology's (Reference).
func (l Lock) ReferenceOn(t cluster.Topology) Lock {
	if l.Reference != "" {
		if ref, err := Lookup(l.Reference); err == nil && ref.Supports(t) {
			return ref
		}
	}
	return Reference(t, l.Nested)
}

// Supports reports whether l can run on topology t.
func (l Lock) Supports(t cluster.Topology) bool { return slices.Contains(l.Topologies, t) }
