package footprint

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Redis reads one RESP command of a lock, its words with the name first,
// as harness.Relay.Command hands them over. It learns:
//
//   - SET k v … NX [PX n | EX n]: Data, key k, the lease (none with
//     EXAT/PXAT, an absolute time, or KEEPTTL); a SET without NX, or with
//     XX, takes nothing (it overwrites);
//   - SETNX k v, HSETNX k f v: Data, key k, no lease;
//   - PEXPIRE k n, EXPIRE k n: the lease n of key k (LeaseOnly);
//   - EVAL script n keys… args…: what RedisScript reads of the script;
//   - EVALSHA sha 1 k …: key k, nothing else (the script is unseen: the
//     caller that saw it loaded should call RedisScript instead).
//
// Anything else (GET, DEL, PTTL, a release script) shows nothing: ok is
// false.
func Redis(args []string) (Footprint, bool) {
	if len(args) < 2 {
		return Footprint{}, false
	}
	from := short(args...)
	switch strings.ToLower(args[0]) {
	case "set":
		return redisSet(args)
	case "setnx":
		if len(args) == 3 {
			return took(args[1], Data, 0, short(args[0], args[1], "…")), true
		}
	case "hsetnx":
		if len(args) == 4 {
			return took(args[1], Data, 0, short(args[0], args[1], args[2], "…")), true
		}
	case "pexpire", "expire":
		if d, ok := ttl(args[0], args[2:]); ok {
			return leaseOf(args[1], d, from), true
		}
	case "eval", "eval_ro":
		if n, keys, argv, ok := scriptArgs(args); ok {
			return RedisScript(args[1], keys[:n], argv)
		}
	case "evalsha", "evalsha_ro":
		if n, keys, _, ok := scriptArgs(args); ok && n == 1 {
			return took(keys[0], Unknown, 0, short(args[0], args[1][:min(len(args[1]), 8)]+"…", "1", keys[0])), true
		}
	}
	return Footprint{}, false
}

// ttl reads the first word of rest as a relative expiry of command cmd
// (PEXPIRE or EXPIRE, PX or EX): milliseconds for a name starting with P.
func ttl(cmd string, rest []string) (time.Duration, bool) {
	if len(rest) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	if strings.HasPrefix(strings.ToLower(cmd), "p") {
		return time.Duration(n) * time.Millisecond, true
	}
	return time.Duration(n) * time.Second, true
}

// redisSet reads SET k v [NX|XX] [GET] [EX n|PX n|EXAT t|PXAT t|KEEPTTL].
func redisSet(args []string) (Footprint, bool) {
	if len(args) < 3 {
		return Footprint{}, false
	}
	nx, lease, words := false, time.Duration(0), []string{args[0], args[1], "…"}
	for i := 3; i < len(args); i++ {
		opt := strings.ToLower(args[i])
		words = append(words, args[i])
		switch opt {
		case "nx":
			nx = true
		case "xx":
			return Footprint{}, false
		case "ex", "px", "exat", "pxat":
			if i+1 >= len(args) {
				return Footprint{}, false
			}
			i++
			words = append(words, args[i])
			if opt == "ex" || opt == "px" {
				d, ok := ttl(opt, args[i:])
				if !ok {
					return Footprint{}, false
				}
				lease = d
			}
		}
	}
	if !nx {
		return Footprint{}, false
	}
	return took(args[1], Data, lease, short(words...)), true
}

// scriptArgs splits EVAL script numkeys keys… args… into its numkeys, its
// keys and its args.
func scriptArgs(args []string) (n int, keys, argv []string, ok bool) {
	if len(args) < 3 {
		return 0, nil, nil, false
	}
	n, err := strconv.Atoi(args[2])
	if err != nil || n < 0 || 3+n > len(args) {
		return 0, nil, nil, false
	}
	return n, args[3 : 3+n], args[3+n:], true
}

var (
	// luaCall is a redis.call( or redis.pcall( (server.* since Redis 7).
	luaCall = regexp.MustCompile(`\b(?:redis|server)\.p?call\s*\(`)
	// luaLocal is a local bound to one value: local x = ARGV[1]; or
	// tonumber(ARGV[2]), KEYS[1], a number or a string, up to the end of
	// its statement.
	luaLocal = regexp.MustCompile(`\blocal\s+([A-Za-z_]\w*)\s*=\s*([^;\n]+?)\s*(?:;|\n|--|$)`)
	// luaArg is one argument of a call the reader can tell: KEYS[i],
	// ARGV[i], tonumber(…) of one, a number, a string.
	luaArg = regexp.MustCompile(`^(?:tonumber\(\s*(.+?)\s*\)|(KEYS|ARGV)\[(\d+)\]|(-?\d+)|'([^']*)'|"([^"]*)")$`)
)

// lua is a script with the values of its KEYS, ARGV and simple locals.
type lua struct {
	keys, argv []string
	locals     map[string]string // a local's expression, "" when assigned more than once
}

// value is the value of expression e, and whether the reader can tell it.
func (s *lua) value(e string) (string, bool) {
	return s.resolve(e, true)
}

// resolve is value, a local looked up when locals says so (once: a local
// bound to another is not told).
func (s *lua) resolve(e string, locals bool) (string, bool) {
	e = strings.TrimSpace(e)
	if x, ok := s.locals[e]; ok && locals {
		if x == "" {
			return "", false
		}
		e, locals = x, false
	}
	m := luaArg.FindStringSubmatch(e)
	switch {
	case m == nil:
		return "", false
	case m[1] != "":
		return s.resolve(m[1], locals)
	case m[2] != "":
		i, _ := strconv.Atoi(m[3])
		list := s.keys
		if m[2] == "ARGV" {
			list = s.argv
		}
		if i < 1 || i > len(list) {
			return "", false
		}
		return list[i-1], true
	case m[4] != "":
		return m[4], true
	}
	return m[5] + m[6], true
}

// RedisScript reads a Lua script a lock ran (EVAL, or EVALSHA of a script
// the caller saw loaded) with its keys and args. It follows each
// redis.call whose command and key it can tell (KEYS[i], ARGV[i], a
// literal, or a local bound once to one of them): SET, SETNX, HSET, HSETNX,
// HINCRBY, HMSET and ZADD write a key; SET … PX/EX, PEXPIRE and EXPIRE give
// it an expiry. A script that writes one key, and no key it cannot tell,
// took it: Data, with the lease when every expiry it gives that key is the
// same value it can tell (Redisson's hincrby + pexpire ARGV[1]). A script
// that only gives one key an expiry it can tell sets its lease
// (LeaseOnly). Anything else (a release script's GET and DEL, an expiry
// computed from PTTL) shows nothing.
func RedisScript(script string, keys, argv []string) (Footprint, bool) {
	s := &lua{keys: keys, argv: argv, locals: map[string]string{}}
	for _, m := range luaLocal.FindAllStringSubmatch(script, -1) {
		if _, twice := s.locals[m[1]]; twice {
			s.locals[m[1]] = ""
		} else {
			s.locals[m[1]] = m[2]
		}
	}
	for name := range s.locals {
		// Assigned again after its declaration: its value is not one.
		if len(regexp.MustCompile(`\b`+name+`\s*=[^=]`).FindAllStringIndex(script, -1)) > 1 {
			s.locals[name] = ""
		}
	}
	written, deleted, doubt := "", map[string]bool{}, false
	expiries := map[string][]time.Duration{} // by key; a 0 is one it cannot tell
	for _, loc := range luaCall.FindAllStringIndex(script, -1) {
		args := luaArgs(script[loc[1]:])
		if len(args) < 2 {
			continue
		}
		cmd, ok1 := s.value(args[0])
		key, ok2 := s.value(args[1])
		cmd = strings.ToLower(cmd)
		switch {
		case !ok1:
			return Footprint{}, false // a command it cannot tell
		case scriptWrites[cmd]:
			if !ok2 || (written != "" && written != key) {
				return Footprint{}, false // a key it cannot tell, or two
			}
			written = key
		case cmd == "del" || cmd == "unlink":
			deleted[key] = true // "" for a key it cannot tell: maybe the one taken
		}
		if d, _, isExpiry := s.expiry(cmd, args[2:]); isExpiry && ok2 {
			expiries[key] = append(expiries[key], d)
		} else if isExpiry {
			doubt = true // an expiry of a key it cannot tell: maybe the one taken
		}
	}
	from := short(append([]string{"EVAL", script, strconv.Itoa(len(keys))}, keys...)...)
	switch {
	case deleted[written] || deleted[""]:
		return Footprint{}, false // it deletes what it writes: a release (Redisson's unlock)
	case written != "" && doubt:
		return took(written, Data, 0, from), true
	case written != "":
		return took(written, Data, oneLease(expiries[written]), from), true
	case len(expiries) != 1 || doubt:
		return Footprint{}, false
	}
	for key, ds := range expiries {
		if d := oneLease(ds); d > 0 && !deleted[key] {
			return leaseOf(key, d, from), true
		}
	}
	return Footprint{}, false
}

// scriptWrites are the commands by which a script writes the key it takes.
var scriptWrites = map[string]bool{"set": true, "setnx": true, "hset": true, "hsetnx": true, "hincrby": true, "hmset": true, "zadd": true}

// oneLease is the lease of expiries ds when they are all one that can be
// told; else 0.
func oneLease(ds []time.Duration) time.Duration {
	for _, d := range ds {
		if d != ds[0] || d <= 0 {
			return 0
		}
	}
	if len(ds) == 0 {
		return 0
	}
	return ds[0]
}

// expiry reads the expiry a call of cmd with args rest (after the key)
// gives its key: isExpiry says the call gives one, ok that it can be told.
func (s *lua) expiry(cmd string, rest []string) (d time.Duration, ok, isExpiry bool) {
	switch cmd {
	case "pexpire", "expire":
		if len(rest) == 0 {
			return 0, false, true
		}
		v, ok := s.value(rest[0])
		d, ok2 := ttl(cmd, []string{v})
		return d, ok && ok2, true
	case "set":
		for i := 1; i+1 < len(rest); i++ {
			opt, _ := s.value(rest[i])
			if opt = strings.ToLower(opt); opt == "px" || opt == "ex" {
				v, ok := s.value(rest[i+1])
				d, ok2 := ttl(opt, []string{v})
				return d, ok && ok2, true
			}
		}
	}
	return 0, false, false
}

// luaArgs splits the arguments of a call whose opening parenthesis ends
// just before s: top-level commas, quotes and nested parentheses kept.
func luaArgs(s string) []string {
	var args []string
	depth, start, quote := 0, 0, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '{' || c == '[':
			depth++
		case c == ',' && depth == 0:
			args, start = append(args, strings.TrimSpace(s[start:i])), i+1
		case c == ')' || c == '}' || c == ']':
			if depth == 0 {
				return append(args, strings.TrimSpace(s[start:i]))
			}
			depth--
		}
	}
	return nil
}
