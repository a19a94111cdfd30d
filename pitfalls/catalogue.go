// Package pitfalls holds every classic Redis-lock pitfall as a runnable lock:
// the broken variant, its fix, and a catalogue entry saying which seed
// article describes it, what goes wrong, which scenario exposes it and which
// checker must catch it.
package pitfalls

import (
	"fmt"
	"strconv"

	"github.com/locklab/locklab/harness"
)

// Variant is the broken or the fixed lock of a pitfall.
type Variant string

const (
	Broken Variant = "broken"
	Fixed  Variant = "fixed"
)

// Variants lists both, broken first.
var Variants = []Variant{Broken, Fixed}

// Pitfall is one catalogue entry.
type Pitfall struct {
	ID       int
	Name     string // e.g. "setnx-expire"
	Title    string
	Seed     string // the seed article (in ../shared/seeds) that describes it
	Wrong    string // what goes wrong, in two sentences
	Fix      string // what the fix changes
	Scenario string // the scenario that exposes it
	// Catches is the verdict each named checker must give the broken variant.
	Catches map[string]harness.Verdict
	// FixedGets overrides what the fixed variant must get, for a fix that
	// protects the resource while the lock itself still fails; nil means
	// every checker ok.
	FixedGets map[string]harness.Verdict
	Broken    harness.NewLocker
	Fixed     harness.NewLocker
}

// Locker is the lock of variant v.
func (p Pitfall) Locker(v Variant) harness.NewLocker {
	if v == Broken {
		return p.Broken
	}
	return p.Fixed
}

// Expected is what each checker must say of variant v: the broken lock gets
// caught, the fixed one passes every checker.
func (p Pitfall) Expected(v Variant) map[string]harness.Verdict {
	if v == Broken {
		return p.Catches
	}
	if p.FixedGets != nil {
		return p.FixedGets
	}
	all := map[string]harness.Verdict{}
	for _, c := range harness.Checkers {
		all[c] = harness.OK
	}
	return all
}

// Catalogue lists every pitfall in ladder order.
func Catalogue() []Pitfall {
	return []Pitfall{
		{
			ID: 1, Name: "setnx-expire", Title: "SETNX and EXPIRE as two commands",
			Seed:     "000 item 1; 003",
			Wrong:    "The lock is taken with SETNX and only then given a TTL with EXPIRE. A client that crashes between the two leaves a key that never expires, and nobody gets the lock again.",
			Fix:      "SET key token NX PX ttl: the lock and its expiry in one command.",
			Scenario: "crash-after-setnx",
			Catches:  map[string]harness.Verdict{harness.CheckLiveness: harness.Stuck},
			Broken:   NewSetnxExpire, Fixed: NewTokenLock,
		},
		{
			ID: 2, Name: "getset-timestamp", Title: "Expiry time in the value, GETSET takeover",
			Seed:     "004; 000 item 2",
			Wrong:    "The value is the expiry time by the client's clock; a client that sees an expired value takes over with GETSET, and release deletes the key if the lease still looks valid. A client whose clock runs ahead sees every lease as expired and takes the lock from its holder.",
			Fix:      "Let the server expire the key (SET NX PX) and release by owner token, so no client clock matters.",
			Scenario: "clock-skew",
			Catches:  map[string]harness.Verdict{harness.CheckLock: harness.Illegal},
			Broken:   NewGetsetTimestamp, Fixed: NewTokenLock,
		},
		{
			ID: 3, Name: "no-ttl", Title: "No expiry at all",
			Seed:     "000 item 3; 003",
			Wrong:    "The lock key is set without a TTL. When its holder crashes inside the critical section the key stays forever and every other client waits forever.",
			Fix:      "Give the key a TTL when it is set.",
			Scenario: "crash-holder",
			Catches:  map[string]harness.Verdict{harness.CheckLiveness: harness.Stuck},
			Broken:   NewNoTTL, Fixed: NewTokenLock,
		},
		{
			ID: 4, Name: "no-release", Title: "The lock is never released",
			Seed:     "000 item 4",
			Wrong:    "The business code forgets to release the lock and relies on its TTL. Every waiter sits idle until the key expires, so throughput collapses to one critical section per TTL.",
			Fix:      "Release in a defer (finally), on every path.",
			Scenario: "contention",
			Catches:  map[string]harness.Verdict{harness.CheckHandover: harness.Slow},
			Broken:   NewNoRelease, Fixed: NewTokenLock,
		},
		{
			ID: 5, Name: "del-release", Title: "Release with a plain DEL",
			Seed:     "000 item 5; 002",
			Wrong:    "Release deletes the key without checking whose it is. When the holder's lease expired before its DEL (a pause, a slow network), the DEL frees the next holder's lock and a third client walks in.",
			Fix:      "Delete only if the key still holds our token, checked and deleted in one Lua script.",
			Scenario: "pause-before-del",
			Catches:  map[string]harness.Verdict{harness.CheckLock: harness.Illegal},
			Broken:   NewDelRelease, Fixed: NewTokenLock,
		},
		{
			ID: 6, Name: "get-then-del", Title: "Owner check and delete as two commands",
			Seed:     "000 item 6; 002",
			Wrong:    "Release does GET, compares the token, then DEL. If the lease expires between the GET and the DEL, another client takes the lock and the DEL frees it.",
			Fix:      "Compare and delete in one Lua script, which Redis runs atomically.",
			Scenario: "pause-before-del",
			Catches:  map[string]harness.Verdict{harness.CheckLock: harness.Illegal},
			Broken:   NewGetThenDel, Fixed: NewTokenLock,
		},
		{
			ID: 7, Name: "no-renewal", Title: "Work outlives the lease",
			Seed:     "000 item 7; 003",
			Wrong:    "The lock is correct but its TTL is fixed. When the critical section runs longer than the TTL, the key expires, a second client enters, and both sell from the same stock.",
			Fix:      "A watchdog renews the lease every TTL/3 with an owner-checked PEXPIRE while the work runs.",
			Scenario: "slow-work",
			Catches:  map[string]harness.Verdict{harness.CheckLock: harness.Illegal, harness.CheckResource: harness.Illegal},
			Broken:   NewTokenLock, Fixed: NewWatchdogLock,
		},
		{
			ID: 9, Name: "non-reentrant", Title: "Taking the lock again while holding it",
			Seed:     "000 item 9; 003",
			Wrong:    "A critical section calls another function that takes the same lock. A non-reentrant lock makes the client wait for itself while its watchdog keeps the lease alive: a deadlock nobody can break.",
			Fix:      "A reentrant lock: a hash whose field is the owner and whose value counts its holds, changed by Lua scripts.",
			Scenario: "nested",
			Catches:  map[string]harness.Verdict{harness.CheckLiveness: harness.Stuck},
			Broken:   NewWatchdogLock, Fixed: NewReentrantLock,
		},
		{
			ID: 12, Name: "fenced", Title: "A paused holder outlives its lease",
			Seed:     "000 item 7; DESIGN.md (fencing, after Kleppmann)",
			Wrong:    "A stop-the-world pause stops the watchdog too, so the lease expires while its holder still believes it holds the lock; when it wakes it writes over the next holder's work. No lock that relies on time can prevent the overlap itself.",
			Fix:      "Fencing: each acquire takes a token from INCR, and the resource refuses reads and writes with a token older than the newest it has seen. The lock checker still reports the overlap; the resource stays correct.",
			Scenario: "pause-holder",
			Catches:  map[string]harness.Verdict{harness.CheckLock: harness.Illegal, harness.CheckResource: harness.Illegal},
			FixedGets: map[string]harness.Verdict{harness.CheckLock: harness.Illegal, harness.CheckResource: harness.OK,
				harness.CheckLiveness: harness.OK},
			Broken: NewWatchdogLock, Fixed: NewFencedLock,
		},
	}
}

// Lookup finds a pitfall by name ("del-release") or ID ("5").
func Lookup(name string) (Pitfall, error) {
	for _, p := range Catalogue() {
		if p.Name == name || strconv.Itoa(p.ID) == name {
			return p, nil
		}
	}
	return Pitfall{}, fmt.Errorf("unknown pitfall %q (see `check list`)", name)
}
