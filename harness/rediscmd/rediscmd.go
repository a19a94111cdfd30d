// Package rediscmd reads what a Redis command does to a lock key from its
// words and its reply: whether it took the key, whether it said yes, and
// how the report names it. It is pure: the harness asks it about the
// commands it sees pass, whoever sent them (a client library's hook or a
// program's relay).
package rediscmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// TookBy tells from a command that names key and its reply whether it took
// the key; known is false for a command whose meaning locklab does not
// know (a script, HSET …), which the key's state must tell. A reply of nil
// with a nil error is a null.
func TookBy(args []string, reply any, err error, key string) (took, known bool) {
	if !NamesKey(args, key) {
		return false, true
	}
	ok := err == nil
	name := strings.ToUpper(args[0])
	if history.Reads(name) {
		return false, true // a read makes the key no one's
	}
	switch name {
	case "SET":
		var nx, xx, cas, get bool
		for _, a := range args[3:] {
			switch strings.ToUpper(a) {
			case "NX":
				nx = true
			case "XX":
				xx = true
			case "IFEQ", "IFNE", "IFDEQ", "IFDNE":
				cas = true
			case "GET":
				get = true
			}
		}
		switch {
		case !get: // go-redis's SetNX reads OK as true
			return ok && (reply == "OK" || reply == true), true
		case cas: // the old value either way
			return false, false
		case nx: // nil: the key did not exist and was set
			return ok && reply == nil, true
		case xx: // nil: the key did not exist and was not set
			return ok && reply != nil, true
		}
		return ok, true // a plain SET … GET always writes
	case "SETNX", "HSETNX", "MSETNX":
		return ok && (reply == int64(1) || reply == true), true
	case "SETEX", "PSETEX":
		return ok && reply == "OK", true
	case "GETSET":
		return ok, true // it writes the key whatever it held
	case "EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT", "PERSIST", "DEL", "UNLINK":
		// Writes that change only the expiry or end the key: none of
		// them makes it anyone's.
		return false, true
	}
	return false, false
}

// NoScript reports whether err is Redis refusing an EVALSHA whose script it
// does not have.
func NoScript(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") }

// ConnectionSetup reports whether cmds, each its words (the name first),
// are what a client library sends on a new connection before the first
// command (HELLO, AUTH, CLIENT …, SELECT, READONLY): the client's, not the
// lock's, so they count in no phase.
func ConnectionSetup(cmds [][]string) bool {
	for _, args := range cmds {
		if len(args) == 0 || !SetupCommand(args[0]) {
			return false
		}
	}
	return len(cmds) > 0
}

// SetupCommand reports whether a command named name sets up a connection
// rather than doing the lock's work.
func SetupCommand(name string) bool {
	switch strings.ToLower(name) {
	case "hello", "auth", "client", "select", "readonly":
		return true
	}
	return false
}

// Name is the name of a command, or of a pipeline's first command, each
// its words (the name first).
func Name(cmds [][]string) string {
	if len(cmds) == 0 || len(cmds[0]) == 0 {
		return "empty pipeline"
	}
	name := strings.ToUpper(cmds[0][0])
	if len(cmds) > 1 {
		name = fmt.Sprintf("pipeline of %d from %s", len(cmds), name)
	}
	return name
}

// NamesKey reports whether a command with words args names key.
func NamesKey(args []string, key string) bool {
	_, ok := KeyIn(args, func(k string) bool { return k == key })
	return ok
}

// KeyIn is the first key of a command with words args that is reports
// true of. Scripts list their keys after the key count; other commands
// name their key first.
func KeyIn(args []string, is func(key string) bool) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	switch strings.ToLower(args[0]) {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		if len(args) < 3 {
			return "", false
		}
		n, _ := strconv.Atoi(args[2])
		for i := 3; i < 3+n && i < len(args); i++ {
			if is(args[i]) {
				return args[i], true
			}
		}
		return "", false
	}
	if len(args) > 1 && is(args[1]) {
		return args[1], true
	}
	return "", false
}

// Outcome reads a reply as yes or no: OK, true, a positive number or
// a non-empty string say the command did what it asked (SET took the key,
// a script returned 1, PEXPIRE renewed, DEL removed, GET found a value); a
// null, false, zero, a negative number (PTTL of no key) or "" say no.
func Outcome(reply any) models.Outcome {
	switch v := reply.(type) {
	case string:
		if v != "" {
			return models.OK
		}
	case bool:
		if v {
			return models.OK
		}
	case int64:
		if v > 0 {
			return models.OK
		}
	}
	return models.Failed
}

// Words names a command by its first words, without keys, values
// or tokens: the name, and for SET its options ("SET PX NX").
func Words(args []string) string {
	name := strings.ToUpper(args[0])
	if name != "SET" || len(args) < 4 {
		return name
	}
	words := []string{name}
	for _, a := range args[3:] {
		switch w := strings.ToUpper(a); w {
		case "NX", "XX", "GET", "KEEPTTL", "EX", "PX", "EXAT", "PXAT", "IFEQ", "IFNE", "IFDEQ", "IFDNE":
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}
