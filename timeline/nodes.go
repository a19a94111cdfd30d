package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// nodeHold is a span in which one lock node held the lock key for one
// client, as the node's replies tell it: from the reply that granted the
// key to the release that removed it, or to the lease's end when neither
// a release nor a renewal came.
type nodeHold struct {
	client   int
	from, to time.Duration
	// lost says the node granted the key to another client at to, so it
	// no longer held it for this one, whatever the lease said.
	lost  bool
	ended string // how the span ended, in words
}

// nodeTick is a node refusing a client's request for the key.
type nodeTick struct {
	client int
	at     time.Duration
}

// Roles of replies, as check tells them.
const (
	roleTake    = checker.RoleTake
	roleRenew   = checker.RoleRenew
	roleRelease = checker.RoleRelease
)

// nodeHolds reads the replies of ops, node by node, into the spans in
// which each node held the key for a client and the ticks of its refusals.
// ttl is the lease: a span with no renewal ends ttl after the call of the
// command that took it. Replies to the probe's commands are left out, as
// its lane is.
func nodeHolds(ops []history.Op, ttl time.Duration, last time.Duration, probe map[int]bool) (map[int][]nodeHold, map[int][]nodeTick) {
	replies := orderedReplies(ops, probe)
	if len(replies) == 0 {
		return nil, nil
	}
	if ttl <= 0 {
		ttl = last // no lease known: a span lasts until released
	}
	k := &keeping{ttl: ttl, last: last, losses: nodeLosses(ops),
		held: map[[2]int]*openSpan{}, holds: map[int][]nodeHold{}, ticks: map[int][]nodeTick{}}
	for _, r := range replies {
		k.read(r)
	}
	k.finish()
	return k.holds, k.ticks
}

// orderedReplies are the replies of ops, less the probe's, each with its
// role, in the order their nodes are taken to have run them.
func orderedReplies(ops []history.Op, probe map[int]bool) []reply {
	var replies []reply
	for _, op := range ops {
		if op.Kind == history.KindReply && !probe[op.Client] {
			replies = append(replies, reply{Op: op})
		}
	}
	// Roles are told in the order of the calls: a script's depends on what
	// the same acquire sent that node before.
	slices.SortStableFunc(replies, func(a, b reply) int { return cmp.Compare(a.Call, b.Call) })
	assignRoles(replies, ops)
	// A node runs each command at some moment between its call and its
	// reply, and concurrent clients' commands interleave there. A take is
	// read at its reply and a release or renewal at its call, so that a
	// release that may have run before another client's take is read
	// first: the take then does not look like the node losing the key.
	slices.SortStableFunc(replies, func(a, b reply) int { return cmp.Compare(a.at(), b.at()) })
	return replies
}

// keeping is what the nodes keep while their replies are read in order:
// the spans still open, by node and client, and those already over.
type keeping struct {
	ttl, last time.Duration
	losses    []loss // those not yet read, in time order
	held      map[[2]int]*openSpan
	holds     map[int][]nodeHold
	ticks     map[int][]nodeTick
}

// openSpan is a span of a node holding the key that has not ended yet.
type openSpan struct{ from, lease time.Duration }

// read takes one reply into the spans, after ending those that were over
// before the node ran its command.
func (k *keeping) read(r reply) {
	k.expire(r.at())
	switch r.role {
	case roleTake:
		k.take(r)
	case roleRenew:
		k.renew(r)
	case roleRelease:
		k.release(r)
	}
}

// take opens a span when the node grants the key, extends the open one
// when it grants it again, and ticks a refusal.
func (k *keeping) take(r reply) {
	key := [2]int{r.Node, r.Client}
	o := k.held[key]
	switch {
	case r.Outcome == models.OK && o != nil:
		o.lease = max(o.lease, r.Call+k.ttl)
	case r.Outcome == models.OK:
		// A node grants the key to one client at a time: whoever it held it
		// for before has lost it by now.
		for other := range k.held {
			if other[0] == r.Node && other[1] != r.Client {
				k.end(other, r.Return, true, fmt.Sprintf("the node granted it to client %d", r.Client))
			}
		}
		k.held[key] = &openSpan{from: r.Return, lease: r.Call + k.ttl}
	case r.Outcome == models.Failed:
		k.ticks[r.Node] = append(k.ticks[r.Node], nodeTick{client: r.Client, at: r.Return})
	}
}

// renew extends an open span's lease. A refused renewal says the key was
// gone before the command ran, so the span ends at its call.
func (k *keeping) renew(r reply) {
	key := [2]int{r.Node, r.Client}
	o := k.held[key]
	switch {
	case r.Outcome == models.OK && o != nil:
		o.lease = max(o.lease, r.Call+k.ttl)
	case r.Outcome == models.Failed && o != nil:
		k.end(key, r.Call, false, "gone before the renewal")
	}
}

// release ends an open span: at the reply when the key was removed, at
// the call when it was already gone.
func (k *keeping) release(r reply) {
	key := [2]int{r.Node, r.Client}
	o := k.held[key]
	switch {
	case r.Outcome == models.OK && o != nil:
		k.end(key, r.Return, false, "released")
	case r.Outcome == models.Failed && o != nil:
		k.end(key, r.Call, false, "gone before the release")
	}
}

// expire ends the spans whose lease ran out by at, and those a node lost
// by at (restarted empty, its clock jumped).
func (k *keeping) expire(at time.Duration) {
	for key, o := range k.held {
		if o.lease <= at {
			k.end(key, o.lease, false, "lease end")
		}
	}
	for len(k.losses) > 0 && k.losses[0].at <= at {
		l := k.losses[0]
		k.losses = k.losses[1:]
		for key, o := range k.held {
			if key[0] == l.node && o.from <= l.at {
				k.end(key, l.at, true, l.label)
			}
		}
	}
}

// end closes the open span of node and client key at at; a span cannot
// end before it began, nor after the history.
func (k *keeping) end(key [2]int, at time.Duration, lost bool, ended string) {
	o := k.held[key]
	delete(k.held, key)
	k.holds[key[0]] = append(k.holds[key[0]], nodeHold{client: key[1], from: o.from, to: min(max(at, o.from), k.last), lost: lost, ended: ended})
}

// finish ends every span at the end of the history and puts each node's
// spans in time order: they were ended in the order of their ends.
func (k *keeping) finish() {
	k.expire(k.last)
	for key := range k.held {
		k.end(key, k.last, false, "still held at the end")
	}
	for _, hs := range k.holds {
		slices.SortFunc(hs, func(a, b nodeHold) int {
			if c := cmp.Compare(a.from, b.from); c != 0 {
				return c
			}
			return a.client - b.client
		})
	}
}

// loss is a fault that lost the lock's state on one node.
type loss struct {
	node  int
	at    time.Duration
	label string // the fault's label, for people
}

// nodeLosses are the faults of ops that can lose the lock's state (their
// effect is a loss) on the lock nodes they struck, in time order: a
// restart of a Redlock node, a jump of its clock.
func nodeLosses(ops []history.Op) []loss {
	var ls []loss
	for _, op := range ops {
		if op.Kind != history.KindFault || op.Effect != history.EffectLoss || op.Target == nil || op.Target.Type != history.TargetNode {
			continue
		}
		for _, n := range op.Target.Nodes {
			ls = append(ls, loss{node: n, at: op.Call, label: op.Fault})
		}
	}
	slices.SortStableFunc(ls, func(a, b loss) int { return cmp.Compare(a.at, b.at) })
	return ls
}

// reply is a reply op and what its command asked of the node.
type reply struct {
	history.Op
	role checker.Role
}

// at is when a reply is read: a take's when it came, anything else's when
// its command was sent.
func (r reply) at() time.Duration {
	if r.role == roleTake && r.Return != history.NeverReturned {
		return r.Return
	}
	return r.Call
}

// assignRoles tells each reply's role (checker.ReplyRoles); replies are
// in the order of their calls.
func assignRoles(replies []reply, ops []history.Op) {
	rs := make([]history.Op, len(replies))
	for i, r := range replies {
		rs[i] = r.Op
	}
	for i, role := range checker.ReplyRoles(rs, ops) {
		replies[i].role = role
	}
}

// clientColour is client c's colour, alike for its holds in its own lane
// and in every node's lane; client 0 keeps the colour of a single node's
// runs. None is the red, green, orange or purple of violations, lessons
// and faults.
func clientColour(c int) string {
	if c < 0 {
		return "#999"
	}
	switch c % 8 {
	case 1:
		return "#17a2b8"
	case 2:
		return "#8c564b"
	case 3:
		return "#bcbd22"
	case 4:
		return "#7f7f7f"
	case 5:
		return "#393b79"
	case 6:
		return "#e7969c"
	case 7:
		return "#637939"
	}
	return "#4a7bd0"
}
