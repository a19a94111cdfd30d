package pitfalls

import (
	"github.com/locklab/locklab/checker"
)

// Cache is the family of locks kept in a cache that may forget them:
// memcached's items.
const Cache Family = "cache"

// memcachedPitfalls is the cache family: a lock kept in memcached, the
// other cache applications lock on (an `add` with an expiry, as the cache
// locks of many PHP and Python frameworks are). Its pitfalls are its own:
// a release that is two requests, an expiry counted in the server's whole
// seconds, and an item the server evicts.
func memcachedPitfalls() []Pitfall {
	return []Pitfall{
		{
			ID: "m1", Family: Cache, Name: "memcached-get-delete", Title: "memcached: get, compare, then a plain delete",
			Article: "000 item 6 and 002, on memcached",
			Wrong: "The lock is an item added with the holder's token and an expiry; the release gets the item, compares the token, " +
				"then deletes the key. If the item expires between the get and the delete, another client adds its own, and the " +
				"delete removes that one: a third client then holds the lock beside the second. memcached's get-then-del.",
			Fix: "Remove the item only while it is the one read: gets returns its CAS id, and a cas of that id with an expiry " +
				"below zero expires it at once, or fails when another client's item has replaced it.",
			Scenario: "pause-before-delete-memcached",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal},
			Kind:     checker.Own,
			Broken:   "memcached-get-delete",
			Fixes:    fixedBy("memcached-no-renewal"),
			Controls: []Case{{Scenario: "contention-memcached"}},
		},
		{
			ID: "m2", Family: Cache, Name: "memcached-one-second", Title: "memcached: an expiry of one second",
			Article: "000 item 7, on memcached",
			Wrong: "memcached counts an item's expiry in whole seconds of a clock that ticks once a second: an item added with " +
				"an expiry of one second expires at the server's next tick, anything from a moment to a second later. A lock " +
				"that asks for a one-second lease, and renews it as often as it likes, loses it in every second: a contender " +
				"walks in with no fault at all.",
			Fix: "A lease of two seconds at least, renewed by a cas of the holder's own item every third of it while the " +
				"lock is held.",
			Scenario: "whole-second-memcached",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Own,
			Broken:   "memcached-one-second",
			Fixes:    fixedBy("memcached"),
		},
		{
			ID: "m3", Family: Cache, Name: "memcached-eviction", Title: "memcached: the server evicts a held lock",
			Article: "001 (a lock in a cache)",
			Wrong: "memcached is a cache: when its memory is full it evicts the least recently used items to make room, and " +
				"a lock's item is an item like any other. A writer fills the server while a client holds the lock; the lock's " +
				"item is evicted, another client adds its own, and both hold the lock. No memcached lock can prevent it.",
			Fix: "None inside the lock: keep locks on a service that does not evict (memcached -M refuses writes instead, a " +
				"server of its own for locks), or fence the resource.",
			Scenario: "evict-holder-memcached",
			Catches:  map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal},
			Kind:     checker.Inherent,
			Broken:   "memcached",
			// A restart loses every lock too: memcached keeps nothing.
			Controls: []Case{{Scenario: "contention-memcached"}},
		},
	}
}
