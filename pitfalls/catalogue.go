// Package pitfalls holds the catalogue: every classic lock pitfall of every
// family (in-process, Redis, database, consensus, memcached), each with the
// lock that shows it, its fixes and controls, which seed article describes
// it (docs/seeds.md), what goes wrong, which scenario exposes it and which
// checker must catch it. The catalogue is data: it names its locks as
// package locks's registry does, and holds no lock's code. A broken lock
// is either a design with a bug of its own (package broken) or a correct
// design used wrongly (package reference, or a service's package): the
// token lock under work past its fixed lease (no-renewal), the watchdog
// lock taken again by its holder (non-reentrant), FOR UPDATE waiting on a
// shared pool (for-update-pool).
package pitfalls

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/checker"
)

// Variant is the broken or the fixed lock of a pitfall.
type Variant string

const (
	Broken Variant = "broken"
	Fixed  Variant = "fixed"
	// Control is the broken lock in its scenario with the pitfall's cause
	// taken away: it must pass, which shows the broken run failed for that
	// cause alone.
	Control Variant = "control"
)

// Family is the kind of lock a pitfall belongs to, by what it keeps its
// state in; the report groups the catalogue by it, as seed 001 compares
// them.
type Family string

// Families, in the catalogue's order.
const (
	InProcess Family = "in-process" // a lock inside each process: nothing shared
	Redis     Family = "Redis"      // a key on one or more Redis servers
	Database  Family = "database"   // a row, a row lock or a session lock of an SQL server
	Consensus Family = "consensus"  // a key of a Raft- or Zab-replicated service (etcd, ZooKeeper): catalogue_etcd.go, catalogue_zookeeper.go
	// Cache is in catalogue_memcached.go.
)

// Pitfall is one catalogue entry.
type Pitfall struct {
	// ID is the pitfall's place on the ladder, unique: "5", or "10a" and
	// "10b" for two entries on one rung.
	ID       string
	Family   Family
	Name     string // e.g. "setnx-expire"
	Title    string
	Article  string // the seed articles (in ../shared/seeds) that describe it
	Wrong    string // what goes wrong, in two sentences
	Fix      string // what the fix changes, or why there is none
	Scenario string // the scenario that exposes the broken lock
	// Catches is the verdict each named checker must give the broken lock.
	Catches map[string]checker.Verdict
	// Kind is the kind of each failing verdict in Catches: own when a
	// correct lock would not fail so (the lock's bug), inherent when the
	// scenario's fault beats any lock of its kind.
	Kind checker.Kind
	// Broken names the broken lock, in package locks's registry, as every
	// lock of a case is named.
	Broken string
	// Fixes are the runs that show the fix; empty when no fix exists inside
	// the lock.
	Fixes []Case
	// Controls are runs of the broken lock in a scenario without the
	// pitfall's cause, which every checker must pass.
	Controls []Case
}

// Case is one run the catalogue asks for: a variant of a pitfall's lock in a
// scenario, and what each checker must say of it.
type Case struct {
	Variant  Variant
	Scenario string
	Lock     string // the lock's name in package locks; "" in a control is the broken lock
	// Expected names the checkers the catalogue judges; nil in a fix means
	// every checker must say ok.
	Expected map[string]checker.Verdict
	// Kind is the kind of each failing verdict in Expected.
	Kind checker.Kind
	// ExcludesNothing says the lock lets every client in at once by design
	// (optimistic locking): its overlapping holds are what it is, not a
	// bug, and the catalogue's test does not ask its history to be free of
	// them.
	ExcludesNothing bool
	// Missed says the lock passes by keeping the workload from ever meeting
	// the scenario's crux (it refuses service instead), as Result.Missed
	// then explains; otherwise a run the crux never struck is a mistake.
	Missed bool
}

// Cases are the runs of a pitfall: its broken lock, then each fix.
func (p Pitfall) Cases() []Case {
	cases := []Case{{Variant: Broken, Scenario: p.Scenario, Lock: p.Broken, Expected: p.Catches, Kind: p.Kind}}
	for _, f := range p.Fixes {
		cases = append(cases, p.passing(f, Fixed))
	}
	for _, c := range p.Controls {
		if c.Lock == "" {
			c.Lock = p.Broken
		}
		cases = append(cases, p.passing(c, Control))
	}
	return cases
}

// passing fills in a run that passes: its variant, its scenario when it
// names none, and ok from every checker when it expects nothing else.
func (p Pitfall) passing(c Case, v Variant) Case {
	c.Variant = v
	if c.Scenario == "" {
		c.Scenario = p.Scenario
	}
	if c.Expected == nil {
		c.Expected = map[string]checker.Verdict{}
		for _, name := range checker.Checkers {
			c.Expected[name] = checker.OK
		}
	}
	return c
}

// fixedBy is the usual single fix: another lock in the same scenario, which
// every checker must pass.
func fixedBy(lock string) []Case { return []Case{{Lock: lock}} }

// Catalogue lists every pitfall in ladder order.
func Catalogue() []Pitfall {
	return append([]Pitfall{
		{
			ID: "0", Family: InProcess, Name: "in-process", Title: "A mutex inside each process",
			Article:  "003 (its first stage)",
			Wrong:    "The sale is guarded by a mutex inside the service, but the service runs as several processes behind a load balancer, each with a mutex of its own. Two processes read the same stock at once and each writes back one less: two units sold, one taken off the stock, which is how seed 003's stock ended at -1.",
			Fix:      "Take a lock that every process shares, held outside them all: the token lock in Redis (SET key token NX PX ttl, released by a Lua compare-and-delete). Every process then waits for that one lock, and the sales run one at a time.",
			Scenario: "contention",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Own,
			Broken:   "in-process", Fixes: fixedBy("token"),
			// The service run once: its one mutex then excludes everyone.
			// Handover is not judged: one client hands the lock to nobody
			// but the liveness probe, too few handovers to say anything.
			Controls: []Case{{Scenario: "one-client", Expected: map[string]checker.Verdict{
				checker.CheckLock: checker.OK, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.OK,
			}}},
		},
		{
			ID: "1", Family: Redis, Name: "setnx-expire", Title: "SETNX and EXPIRE as two commands",
			Article:  "000 item 1; 003",
			Wrong:    "The lock is taken with SETNX and only then given a TTL with EXPIRE. A client that crashes between the two leaves a key that never expires, and nobody gets the lock again.",
			Fix:      "SET key token NX PX ttl: the lock and its expiry in one command.",
			Scenario: "crash-after-setnx",
			Catches:  map[string]checker.Verdict{checker.CheckLiveness: checker.Stuck},
			Kind:     checker.Own,
			Broken:   "setnx-expire", Fixes: fixedBy("token"),
		},
		{
			ID: "2", Family: Redis, Name: "getset-timestamp", Title: "Expiry time in the value, GETSET takeover",
			Article:  "004; 000 item 2",
			Wrong:    "The value is the expiry time by the client's clock; a client that sees an expired value takes over with GETSET, and release deletes the key if the lease still looks valid. A client whose clock runs ahead sees every lease as expired and takes the lock from its holder.",
			Fix:      "Let the server expire the key (SET NX PX) and release by owner token, so no client clock matters.",
			Scenario: "clock-skew",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal},
			Kind:     checker.Own,
			Broken:   "getset-timestamp", Fixes: fixedBy("token"),
		},
		{
			ID: "3", Family: Redis, Name: "no-ttl", Title: "No expiry at all",
			Article:  "000 item 3; 003",
			Wrong:    "The lock key is set without a TTL. When its holder crashes inside the critical section the key stays forever and every other client waits forever.",
			Fix:      "Give the key a TTL when it is set.",
			Scenario: "crash-holder",
			Catches:  map[string]checker.Verdict{checker.CheckLiveness: checker.Stuck},
			Kind:     checker.Own,
			Broken:   "no-ttl", Fixes: fixedBy("token"),
		},
		{
			ID: "4", Family: Redis, Name: "no-release", Title: "The lock is never released",
			Article:  "000 item 4",
			Wrong:    "The business code forgets to release the lock and relies on its TTL. Every waiter sits idle until the key expires, so throughput collapses to one critical section per TTL.",
			Fix:      "Release in a defer (finally), on every path.",
			Scenario: "contention",
			Catches:  map[string]checker.Verdict{checker.CheckHandover: checker.Slow},
			Kind:     checker.Own,
			Broken:   "no-release", Fixes: fixedBy("token"),
		},
		{
			ID: "5", Family: Redis, Name: "del-release", Title: "Release with a plain DEL",
			Article:  "000 item 5; 002",
			Wrong:    "Release deletes the key without checking whose it is. When the holder's lease expired before its DEL (a pause, a slow network), the DEL frees the next holder's lock and a third client walks in.",
			Fix:      "Delete only if the key still holds our token, checked and deleted in one Lua script.",
			Scenario: "pause-before-del",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal},
			Kind:     checker.Own,
			Broken:   "del-release", Fixes: fixedBy("token"),
		},
		{
			ID: "6", Family: Redis, Name: "get-then-del", Title: "Owner check and delete as two commands",
			Article:  "000 item 6; 002",
			Wrong:    "Release does GET, compares the token, then DEL. If the lease expires between the GET and the DEL, another client takes the lock and the DEL frees it.",
			Fix:      "Compare and delete in one Lua script, which Redis runs atomically.",
			Scenario: "pause-before-del",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal},
			Kind:     checker.Own,
			Broken:   "get-then-del", Fixes: fixedBy("token"),
		},
		{
			ID: "7", Family: Redis, Name: "no-renewal", Title: "Work outlives the lease",
			Article:  "000 item 7; 003",
			Wrong:    "The lock is correct but its TTL is fixed. When the critical section runs longer than the TTL, the key expires, a second client enters, and both sell from the same stock.",
			Fix:      "A watchdog renews the lease every TTL/3 with an owner-checked PEXPIRE while the work runs.",
			Scenario: "slow-work",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Own,
			Broken:   "no-renewal", Fixes: fixedBy("token-watchdog"),
		},
		{
			ID: "8", Family: Redis, Name: "unlock-before-commit", Title: "Unlocking before the transaction commits",
			Article:  "000 item 8",
			Wrong:    "The lock is released inside a @Transactional method, so it is free before the transaction commits. The next holder's SELECT still sees the old stock, its UPDATE waits for the row lock and then writes over the first sale: the lock checker is happy, the stock is wrong.",
			Fix:      "Commit, then unlock: take the lock outside the transaction.",
			Scenario: "unlock-before-commit",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.OK, checker.CheckResource: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "token-watchdog",
			Fixes:    []Case{{Lock: "token-watchdog", Scenario: "commit-before-unlock"}},
		},
		{
			ID: "9", Family: Redis, Name: "non-reentrant", Title: "Taking the lock again while holding it",
			Article:  "000 item 9; 003",
			Wrong:    "A critical section calls another function that takes the same lock. A non-reentrant lock makes the client wait for itself while its watchdog keeps the lease alive: a deadlock nobody can break.",
			Fix:      "A reentrant lock: a hash whose field is the owner and whose value counts its holds, changed by Lua scripts.",
			Scenario: "nested",
			Catches:  map[string]checker.Verdict{checker.CheckLiveness: checker.Stuck},
			Kind:     checker.Own,
			Broken:   "non-reentrant", Fixes: fixedBy("reentrant"),
		},
		{
			ID: "10a", Family: Redis, Name: "failover", Title: "Failover loses the lock",
			Article:  "000 item 10",
			Wrong:    "Replication is asynchronous: the master grants the lock and dies before any replica has it. Sentinel promotes a replica that never saw the lock, and a second client takes it while the first still holds it, its lease (6 s, longer than the failover) still valid. With replication working, the same failover loses nothing (the control run).",
			Fix:      "WAIT 1 after acquiring gives back a lock no replica acknowledged. With replication cut it refuses every acquire, so no holder is ever there for the master's kill to strike: safe by refusing service, no lock at all while replication is down. failover-wait shows it does not close every window. Independent masters (Redlock) or fencing tokens are the real answers.",
			Scenario: "failover",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "reentrant",
			// WAIT refuses every acquire once replication is cut, so the
			// master is never killed under a holder: safe by refusing service.
			Fixes:    []Case{{Lock: "wait-replicas", Missed: true}},
			Controls: []Case{{Scenario: "failover-replicated"}},
		},
		{
			ID: "10b", Family: Redis, Name: "failover-wait", Title: "WAIT narrows the failover window, it does not close it",
			Article:  "000 item 10",
			Wrong:    "WAIT 1 only proves that one replica had the lock. When that replica is lost together with the master, Sentinel promotes the other, which never had it, and a second client takes the lock.",
			Fix:      "None inside a replicated Redis: WAIT is not consensus. Use independent masters (Redlock) with its own caveats, or fencing tokens at the resource.",
			Scenario: "failover-wait",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "wait-replicas",
		},
		{
			ID: "11a", Family: Redis, Name: "redlock-restart", Title: "Redlock: a node restarts empty",
			Article:  "000 item 10; DESIGN.md (Redlock)",
			Wrong:    "Client 0 holds the lock on three of five nodes; one of them is killed and restarted at once without its data. Another client now wins a majority on the restarted node and the two the first could not reach, and both hold the lock.",
			Fix:      "Restart a crashed node only after a TTL has passed (its keys would have expired anyway), or persist every write with appendfsync always.",
			Scenario: "redlock-restart",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "redlock",
			Fixes:    []Case{{Lock: "redlock", Scenario: "redlock-restart-delayed"}, {Lock: "redlock", Scenario: "redlock-restart-fsync"}},
		},
		{
			ID: "11b", Family: Redis, Name: "redlock-clock-jump", Title: "Redlock: a node's clock jumps",
			Article:  "000 item 10; DESIGN.md (Redlock)",
			Wrong:    "Client 0 holds the lock on three of five nodes when one of them jumps its clock forward past the TTL, so its key expires early. Another client wins a majority while client 0 still holds the lock.",
			Fix:      "None inside Redlock: its safety assumes bounded clock drift on every node. Operate nodes with slewing (not stepping) time sync, or use fencing tokens at the resource.",
			Scenario: "redlock-clock-jump",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "redlock",
		},
		{
			ID: "11c", Family: Redis, Name: "redlock-pause", Title: "Redlock: the holder pauses past its validity",
			Article:  "000 items 7 and 10; DESIGN.md (Redlock, fencing)",
			Wrong:    "Client 0 is paused (a GC pause) inside its critical section for longer than the lock's validity, so another client acquires on every node. When client 0 wakes it still believes it holds the lock and writes over the other's work.",
			Fix:      "None inside Redlock: no lease protects a paused holder. Fencing tokens at the resource refuse the stale writer; the lock checker still sees the overlap, the resource stays correct.",
			Scenario: "redlock-pause",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "redlock",
			Fixes:    []Case{{Lock: "fenced-redlock", Expected: fencedGets, Kind: checker.Inherent}},
		},
		{
			ID: "12", Family: Redis, Name: "fenced", Title: "A paused holder outlives its lease",
			Article:  "000 item 7; DESIGN.md (fencing, after Kleppmann)",
			Wrong:    "A stop-the-world pause stops the watchdog too, so the lease expires while its holder still believes it holds the lock; when it wakes it writes over the next holder's work. No lock that relies on time can prevent the overlap itself.",
			Fix:      "Fencing: each acquire takes a token from INCR, and the resource refuses reads and writes with a token older than the newest it has seen. The lock checker still reports the overlap; the resource stays correct.",
			Scenario: "pause-holder",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "token-watchdog",
			Fixes:    []Case{{Lock: "fenced", Expected: fencedGets, Kind: checker.Inherent}},
		},
		{
			ID: "d1", Family: Database, Name: "row-no-expiry", Title: "A database lock row that never expires",
			Article:  "001 §1",
			Wrong:    "The lock is a row with a unique name: INSERT takes it, DELETE gives it back. A holder that crashes before its DELETE leaves the row behind, and nobody ever gets the lock again.",
			Fix:      "Give the row an expiry in the server's clock and have every acquire first delete a row whose expiry has passed: the seed's cleanup job, run by whoever wants the lock.",
			Scenario: "crash-holder-sql",
			Catches:  map[string]checker.Verdict{checker.CheckLiveness: checker.Stuck},
			Kind:     checker.Own,
			Broken:   "row-no-expiry",
			Fixes:    []Case{{Lock: "row-cleanup"}},
		},
		{
			ID: "d2", Family: Database, Name: "row-cleanup", Title: "The cleanup job deletes a slow holder's row",
			Article:  "001 §1",
			Wrong:    "The cleanup that frees a dead holder's row cannot tell it from a slow one: once a critical section outlasts the expiry, its row is deleted and a second client inserts its own. Two holders work at once.",
			Fix:      "A watchdog that extends the row's expiry while its holder lives (an owner-checked UPDATE every TTL/3), as Redis's watchdog lock does. A paused holder still loses its row; the row's AUTO_INCREMENT id as a fencing token the resource checks keeps the stale write out (pause-holder-sql).",
			Scenario: "slow-work-sql",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Own,
			Broken:   "row-cleanup",
			Fixes: []Case{
				{Lock: "unique-row"},
				// A pause beats the watchdog too: fencing keeps the
				// resource right all the same, as pitfall 12 shows on Redis.
				{Scenario: "pause-holder-sql", Lock: "fenced-row", Expected: fencedGets, Kind: checker.Inherent},
			},
		},
		{
			ID: "d3a", Family: Database, Name: "for-update", Title: "SELECT … FOR UPDATE: the row lock dies with its connection",
			Article: "001 §2",
			Wrong: "The lock is the row lock of SELECT … FOR UPDATE, held by a transaction left open on one connection; COMMIT releases it. " +
				"A crash or a pause is safe (the server rolls back a lost connection; waiters wait), but when the server closes the holder's " +
				"connection while it works (a KILL, a wait_timeout), the lock is gone and the holder, writing on another connection, does not know.",
			Fix: "Make the protected write in the lock's own transaction, committed with the release: the server rolled it back with the lock, " +
				"so the stale write fails (the lock checker still sees the overlap; the resource stays right). No lock bound to a connection outlives it.",
			Scenario: "kill-connection-sql",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "for-update",
			Fixes:    []Case{{Lock: "for-update-tx", Expected: fencedGets, Kind: checker.Inherent}},
			// The server frees the row lock of a crashed holder, and
			// keeps it for a paused one: both pass.
			Controls: []Case{{Scenario: "crash-holder-sql"}, {Scenario: "pause-holder-sql"}},
		},
		{
			ID: "d3b", Family: Database, Name: "for-update-pool", Title: "SELECT … FOR UPDATE: waiters tie up the pool",
			Article: "001 §2 (an uncommitted exclusive lock ties up a connection; enough of them burst the pool)",
			Wrong: "Each waiter waits inside SELECT … FOR UPDATE holding a connection of its service's pool. Four requests on a pool of three: " +
				"the holder has one, two waiters the rest, and the holder's write on a second connection waits for the pool while the waiters " +
				"wait for its row, until a lock wait times out (innodb_lock_wait_timeout, 50 s by default). Nothing is sold twice; " +
				"a pool sized for every waiter passes (the control), while their count is known.",
			Fix: "One connection per request: the write in the lock's transaction (for-update-tx), so that any pool only queues the waiters; " +
				"or NOWAIT, the connection given back between tries (for-update-nowait).",
			Scenario: "pool-sql",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.OK, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.Stuck},
			Kind:     checker.Own,
			Broken:   "for-update-pool",
			// for-update-nowait passes pool-sql too (check -lock); a
			// pitfall has one case per variant and scenario.
			Fixes: []Case{{Lock: "for-update-tx"}},
			// HikariCP's rule sizes the pool that cannot deadlock:
			// threads × (connections one holds at once − 1) + 1 = 5.
			Controls: []Case{{Scenario: "pool-sql-sized"}},
		},
		{
			ID: "d4", Family: Database, Name: "get-lock-pool", Title: "GET_LOCK on a pool: the release runs on another connection",
			Article: "001 §2 (a lock bound to a connection); MariaDB's GET_LOCK",
			Wrong: "GET_LOCK belongs to the connection that took it, but the lock runs GET_LOCK and RELEASE_LOCK each on whatever connection " +
				"the pool hands out. When another request of the client holds a pooled connection meanwhile, the acquire and the release run on different ones: " +
				"RELEASE_LOCK returns 0, and the lock stays with a connection idle in the pool, which only its own client can take again.",
			Fix:      "Pin one connection (database/sql's Conn) from GET_LOCK to RELEASE_LOCK.",
			Scenario: "busy-pool-sql",
			Catches:  map[string]checker.Verdict{checker.CheckLiveness: checker.Stuck},
			Kind:     checker.Own,
			Broken:   "get-lock-pool",
			Fixes:    []Case{{Lock: "get-lock"}},
			// Without another request holding a connection, the pool
			// hands the release the acquire's connection, the one it got
			// back last: the pool lock passes.
			Controls: []Case{{Scenario: "contention-sql"}},
		},
		{
			ID: "d5", Family: Database, Name: "get-lock", Title: "GET_LOCK dies with its connection",
			Article: "001 §2 (a lock bound to a connection); MariaDB's GET_LOCK",
			Wrong: "GET_LOCK on a pinned connection is freed when that connection ends: when the server kills it while the holder works, " +
				"another client gets the lock, and the holder, writing the stock on its own connection, does not know.",
			Fix: "Make the protected write in a transaction on the lock's pinned connection, committed before RELEASE_LOCK: " +
				"it dies with the lock (the lock checker still sees the overlap; the resource stays right).",
			Scenario: "kill-connection-sql",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "get-lock",
			Fixes:    []Case{{Lock: "get-lock-tx", Expected: fencedGets, Kind: checker.Inherent}},
			Controls: []Case{{Scenario: "crash-holder-sql"}, {Scenario: "pause-holder-sql"}},
		},
		{
			ID: "d6", Family: Database, Name: "no-version-check", Title: "Optimistic locking without its check: no lock at all",
			Article: "001 §3",
			Wrong: "The optimistic lock takes nothing: every client enters at once, reads the stock, works and writes. " +
				"Without the check that the data is still as it was read, two clients that read the same stock both write it minus one: a lost update.",
			Fix: "Write only if the data is unchanged (UPDATE … WHERE stock = the stock read: the stock only goes down, so it is the row's version) " +
				"and count a write that matches no row as rejected. The resource stays right; the lock checker still sees every client " +
				"inside at once, by design (there is no lock), and the rejected sales are the price under contention.",
			Scenario: "contention-sql-tx",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Own,
			Broken:   "no-version-check",
			Fixes: []Case{{Lock: "optimistic", Kind: checker.Own, ExcludesNothing: true, Expected: map[string]checker.Verdict{
				checker.CheckLock: checker.Illegal, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.OK}}},
		},
		{
			ID: "p1", Family: Database, Name: "advisory-pool", Title: "A PostgreSQL advisory lock released on another pooled connection",
			Article:  "001 (PostgreSQL advisory locks)",
			Wrong:    "pg_advisory_lock belongs to the session, the one connection, that took it. Taken and released through a connection pool, the unlock runs on whichever connection the pool hands out: when the one that took the lock is busy elsewhere in the process, the unlock lands on another session, returns false, and the lock stays held by a connection idling in the pool. Nobody gets it again.",
			Fix:      "Pin one connection for the hold (database/sql's DB.Conn): take the lock on it, unlock on it, then give it back; a connection whose unlock failed is closed, which ends its session and frees its locks.",
			Scenario: "busy-pool-postgres",
			Catches:  map[string]checker.Verdict{checker.CheckLiveness: checker.Stuck},
			Kind:     checker.Own,
			Broken:   "advisory-pool",
			Fixes:    fixedBy("advisory-pinned"),
			// The same lock with nobody else on its pool: database/sql
			// hands back the connection returned last, the lock's own,
			// so the unlock lands on the right session.
			Controls: []Case{{Scenario: "contention-postgres"}},
		},
		{
			ID: "p2", Family: Database, Name: "advisory-session", Title: "A PostgreSQL advisory lock dies with its session",
			Article: "001 (PostgreSQL advisory locks)",
			Wrong: "The pinned advisory lock is right about its connection, but the lock is its session's: when the server ends the session " +
				"while the holder works (pg_terminate_backend, an idle timeout, a restart of the connection pooler), the lock is freed, another " +
				"client takes it, and the holder, which learns of it only at its next statement, writes on.",
			Fix: "Take the lock with pg_advisory_xact_lock in a transaction on one connection and make the protected write in that " +
				"transaction; COMMIT is the release. No lock held by a session outlives it, but the write now dies with the lock: the " +
				"server rolls both back, and the holder's UPDATE or COMMIT fails (the lock checker still sees the overlap; the resource stays right).",
			Scenario: "kill-connection-postgres",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "advisory-pinned",
			Fixes:    []Case{{Lock: "advisory-tx", Expected: fencedGets, Kind: checker.Inherent}},
			// A crashed holder's session ends and frees the lock; a paused
			// one keeps it: both pass.
			Controls: []Case{{Scenario: "crash-holder-postgres"}, {Scenario: "pause-holder-postgres"}},
		},
	}, append(append(consensus(), zookeeperPitfalls()...), memcachedPitfalls()...)...)
}

// fencedGets is what a fenced lock gets under a pause: the lock overlaps,
// the resource does not.
var fencedGets = map[string]checker.Verdict{
	checker.CheckLock: checker.Illegal, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.OK,
}

// Lookup finds pitfalls by name ("del-release"), by ID ("10a"), or by the
// rung of the ladder ("11" names 11a, 11b and 11c).
func Lookup(name string) ([]Pitfall, error) {
	var found []Pitfall
	for _, p := range Catalogue() {
		if p.Name == name || p.ID == name || strings.TrimRight(p.ID, "abcdefgh") == name {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("unknown pitfall %q (see `check list`)", name)
	}
	return found, nil
}
