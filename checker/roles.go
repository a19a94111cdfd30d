package checker

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// Role is what a reply's command asked of its lock node, as the node-by-node
// judgement and the run page's node lanes both read it.
type Role int

// Roles of replies.
const (
	RoleNone    Role = iota // a read, or a command that changes no owner
	RoleTake                // take the key (SET NX, an acquire's script)
	RoleRenew               // extend the key's expiry
	RoleRelease             // remove the key
)

// RoleOf tells what reply r's command asked of the node. Commands whose
// meaning is known say it by their name; a script or any other write says
// it by the phase it was sent in: in an acquire, a take, unless the same
// acquire already asked that node for the key (asked), when it gives back
// what it may have taken (Redlock does so on every node when it misses the
// quorum); in a release, a release; in the background, a renewal.
func RoleOf(r history.Op, asked bool) Role {
	name, _, _ := strings.Cut(r.Command, " ")
	switch name {
	case "SET", "SETNX", "SETEX", "PSETEX", "GETSET", "HSETNX":
		return RoleTake
	case "EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT":
		return RoleRenew
	case "DEL", "UNLINK":
		return RoleRelease
	}
	if history.Reads(name) {
		return RoleNone
	}
	switch r.Phase {
	case "acquire":
		if asked {
			return RoleRelease
		}
		return RoleTake
	case "release":
		return RoleRelease
	case "background":
		return RoleRenew
	}
	return RoleNone
}

// ReplyRoles tells the role of each of replies, which must be in the order
// of their calls. What a script sent in an acquire asked depends on
// whether the same acquire (the client's acquire op of ops whose span
// holds the command's call) had already asked that node for the key.
func ReplyRoles(replies, ops []history.Op) []Role {
	acquires := map[int][]history.Op{} // per client, in the order of their calls
	for _, op := range ops {
		if op.Kind == history.KindAcquire {
			acquires[op.Client] = append(acquires[op.Client], op)
		}
	}
	last := history.Last(ops)
	for _, as := range acquires {
		slices.SortStableFunc(as, func(a, b history.Op) int { return cmp.Compare(a.Call, b.Call) })
	}
	// within is the index of the acquire of client whose span holds t, or -1.
	within := func(client int, t time.Duration) int {
		as := acquires[client]
		i, _ := slices.BinarySearchFunc(as, t, func(a history.Op, t time.Duration) int { return cmp.Compare(a.Call, t+1) })
		if i--; i >= 0 && history.Returned(as[i], last) >= t {
			return i
		}
		return -1
	}
	roles := make([]Role, len(replies))
	asked := map[[3]int]bool{} // by client, node and acquire
	for i, r := range replies {
		k := [3]int{r.Client, r.Node, within(r.Client, r.Call)}
		roles[i] = RoleOf(r, k[2] >= 0 && asked[k])
		if roles[i] == RoleTake && k[2] >= 0 {
			asked[k] = true
		}
	}
	return roles
}
