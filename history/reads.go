package history

import "strings"

// Reads reports whether a request's command (Op.Command, its first word)
// only reads the lock's state, on any service whose commands the history
// names: it takes no key, starts no lease and renews none. A Redis read,
// WATCH and SCRIPT (which loads a script, not runs it); etcd's RANGE, with
// which a waiting acquire reads who holds the key. SQL's SELECT is not
// one: SELECT GET_LOCK(…) and SELECT … FOR UPDATE take locks.
func Reads(command string) bool {
	name, _, _ := strings.Cut(command, " ")
	switch name {
	case "GET", "MGET", "EXISTS", "TYPE", "TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "STRLEN", "GETRANGE",
		"HGET", "HEXISTS", "HGETALL", "HLEN", "HMGET", "HKEYS", "HVALS", "DUMP", "OBJECT",
		"EVAL_RO", "EVALSHA_RO", "FCALL_RO", "WATCH", "SCRIPT",
		"RANGE":
		return true
	}
	return false
}
