package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// replies is what the lock nodes' replies tell the judge (history
// KindReply): each reply with its role, by client, in the order of their
// calls. Empty when the topology records none (one lock node).
type replies struct {
	byClient map[int][]roled
	ttl      time.Duration
	last     time.Duration
}

// roled is a reply and what its command asked of the node.
type roled struct {
	history.Op
	role Role
}

func newReplies(ops []history.Op, ttl time.Duration) replies {
	var rs []history.Op
	for _, op := range ops {
		if op.Kind == history.KindReply {
			rs = append(rs, op)
		}
	}
	slices.SortStableFunc(rs, func(a, b history.Op) int { return cmp.Compare(a.Call, b.Call) })
	r := replies{byClient: map[int][]roled{}, ttl: ttl, last: history.Last(ops)}
	for i, role := range ReplyRoles(rs, ops) {
		r.byClient[rs[i].Client] = append(r.byClient[rs[i].Client], roled{Op: rs[i], role: role})
	}
	return r
}

// any reports whether the history recorded any reply.
func (r replies) any() bool { return len(r.byClient) > 0 }

// of are client's replies called within from..to, of role and outcome.
func (r replies) of(client int, from, to time.Duration, role Role, outcome models.Outcome) []roled {
	var out []roled
	for _, x := range r.byClient[client] {
		if x.role == role && x.Outcome == outcome && x.Call >= from && x.Call <= to {
			out = append(out, x)
		}
	}
	return out
}

// returned is when x's reply came, or, for one that never came, when the
// client stopped waiting for it: the end of its acquire or release, else a
// TTL on (a renewal's timeout is shorter), within the history.
func (r replies) returned(x history.Op, ops []history.Op) time.Duration {
	if x.Return != history.NeverReturned {
		return x.Return
	}
	for _, op := range ops {
		if op.Client == x.Client && (op.Kind == history.KindAcquire || op.Kind == history.KindRelease) &&
			op.Call <= x.Call && history.Returned(op, r.last) >= x.Call {
			return history.Returned(op, r.last)
		}
	}
	return min(x.Call+r.ttl, r.last)
}

// inFlight is, for each lock node, when client had a command to it in
// flight: from its call to its reply, or to when it stopped waiting.
func (r replies) inFlight(client int, ops []history.Op) map[int][]history.Span {
	out := map[int][]history.Span{}
	for _, x := range r.byClient[client] {
		out[x.Node] = append(out[x.Node], history.Span{From: x.Call, To: r.returned(x.Op, ops)})
	}
	return out
}

// onNodes reports whether fault f strikes through lock nodes, and which:
// a node's server, or a client's links to some nodes. all says it names a
// node only by its role (a master), so it may be any of them.
func onNodes(f history.Op) (nodes []int, all, ok bool) {
	if f.Target == nil || (f.Target.Type != history.TargetNode && f.Target.Type != history.TargetLink) {
		return nil, false, false
	}
	if f.Target.Role != "" {
		return nil, true, true
	}
	return f.Target.Nodes, false, len(f.Target.Nodes) > 0
}

// touches reports whether fault f strikes lock node n.
func touches(f history.Op, n int) bool {
	nodes, all, ok := onNodes(f)
	return ok && (all || slices.Contains(nodes, n))
}

// nodeCase is what one lock node's replies make of an overlap: the node
// where both holds were granted, and whether the earlier hold's key was
// gone from it before the later was granted.
type nodeCase struct {
	node  int
	class Class // Proved: still valid there; Explained: lost first; Unexplained: open
	why   string
}

// shared judges an overlap node by node, on each node where the earlier
// hold a and the later hold b were both granted (see Judge); nil when the
// replies show no such node.
func (p proof) shared(a, b hold) []nodeCase {
	aCall, okA := p.calledAt(a)
	bCall, okB := p.calledAt(b)
	if !p.replies.any() || !okA || !okB {
		return nil
	}
	var cases []nodeCase
	takes := p.replies.of(a.client, aCall, a.start, RoleTake, models.OK)
	for _, g := range p.replies.of(b.client, bCall, b.start, RoleTake, models.OK) {
		i := slices.IndexFunc(takes, func(t roled) bool { return t.Node == g.Node })
		if i < 0 || slices.ContainsFunc(cases, func(c nodeCase) bool { return c.node == g.Node }) {
			continue
		}
		// The node ran the grant sent first first; the later hold's may
		// be it, when its acquire took long.
		switch take := takes[i]; {
		case g.Call >= take.Return:
			cases = append(cases, p.onNode(a, take, g))
		case take.Call >= g.Return:
			cases = append(cases, p.onNode(b, g, take))
		default:
			cases = append(cases, nodeCase{node: g.Node, class: Unexplained,
				why: fmt.Sprintf("node %d: client %d's grant (%s to %s) and client %d's (%s to %s) overlap in time: the replies do not tell which the node ran first",
					g.Node, a.client, ms(take.Call), ms(take.Return), b.client, ms(g.Call), ms(g.Return))})
		}
	}
	return cases
}

// onNode judges one shared node: take is the grant there of hold a, which
// the node ran first, g the other hold's, which it ran after.
func (p proof) onNode(a hold, take, g roled) nodeCase {
	n := take.Node
	b := hold{client: g.Client}
	c := nodeCase{node: n, class: Unexplained}
	// The key lives a TTL from when the node ran the last command that
	// set or renewed it: no earlier than that command's call, no later
	// than its reply.
	validTo, goneBy := take.Call+p.ttl, take.Return+p.ttl
	for _, r := range p.replies.of(a.client, a.start, g.Call, RoleRenew, models.OK) {
		if r.Node == n && r.Return != history.NeverReturned {
			validTo, goneBy = max(validTo, r.Call+p.ttl), max(goneBy, r.Return+p.ttl)
		}
	}
	for _, f := range p.faults {
		if effect(f) == history.EffectLoss && touches(f, n) && f.Call >= take.Call && f.Call <= g.Return {
			c.class, c.why = Explained, fmt.Sprintf("node %d lost client %d's key to %q at %s", n, a.client, f.Fault, ms(f.Call))
			return c
		}
	}
	// A removal the replies cannot attribute decides nothing by itself;
	// the key's expiry still can: had it not been removed, it would have
	// been gone by the other grant all the same.
	removal, class, removed := p.removed(a, take, g, validTo, goneBy)
	switch {
	case removed && class != Unexplained:
		c.class, c.why = class, removal
	case g.Call >= goneBy:
		c.class, c.why = p.expired(a, n, goneBy)
	case removed:
	case g.Return < validTo:
		if f, ok := p.touched(n, take.Call, g.Return); ok {
			c.why = fmt.Sprintf("node %d granted client %d at %s while client %d's key was valid there by its TTL, but %q touched the node meanwhile",
				n, b.client, ms(g.Return), a.client, f.Fault)
			return c
		}
		c.class, c.why = Proved, fmt.Sprintf("node %d granted client %d the key by %s while client %d's, granted there at %s, was valid until %s at least by the node's TTL, "+
			"and no fault touched node %d: %s", n, b.client, ms(g.Return), a.client, ms(take.Return), ms(validTo), n, p.counted())
	case ifAbsent(g):
		// The node granted only once the key was gone, and neither a
		// loss nor a removal took it: it expired by then.
		c.class, c.why = p.expired(a, n, min(goneBy, g.Return))
	default:
		c.why = fmt.Sprintf("node %d: client %d's key there expired between %s and %s by the node's TTL, and client %d's grant ran between %s and %s: "+
			"the replies do not tell which came first", n, a.client, ms(validTo), ms(goneBy), b.client, ms(g.Call), ms(g.Return))
	}
	if removed && c.class == Unexplained {
		c.why = removal
	}
	return c
}

// ifAbsent reports whether reply g's command sets the key only if it is
// absent (SET … NX, SETNX), so that its grant proves the key was gone.
func ifAbsent(g roled) bool {
	words := strings.Fields(g.Command)
	return slices.Contains(words, "NX") || slices.Contains(words, "SETNX")
}

// removed tells, when a release took a's key off the node of take before
// grant g: by a itself, that explains the node; by another client while
// the key was surely valid and no fault touched the node, the lock removed
// a key it did not hold. A removal once a's key had surely expired there
// (goneBy) removed another's key, and tells nothing of a's.
func (p proof) removed(a hold, take, g roled, validTo, goneBy time.Duration) (why string, class Class, ok bool) {
	n := take.Node
	var removals []roled
	for client := range p.replies.byClient {
		removals = append(removals, p.replies.of(client, take.Call, g.Return, RoleRelease, models.OK)...)
	}
	// The first removal decides, whatever the map's order.
	slices.SortFunc(removals, func(x, y roled) int { return cmp.Or(cmp.Compare(x.Call, y.Call), cmp.Compare(x.Client, y.Client)) })
	for _, r := range removals {
		client := r.Client
		if r.Node != n || (client != a.client && r.Call >= goneBy) {
			continue
		}
		if client == a.client {
			return fmt.Sprintf("client %d's own release removed its key from node %d at %s", a.client, n, ms(r.Call)), Explained, true
		}
		f, touched := p.touched(n, take.Call, g.Return)
		if r.Call > take.Return && r.Return != history.NeverReturned && r.Return < validTo && !touched {
			return fmt.Sprintf("client %d removed client %d's key from node %d at %s while it was valid there until %s at least, and no fault touched the node: "+
				"the lock removed a key it did not hold", client, a.client, n, ms(r.Call), ms(validTo)), Proved, true
		}
		why := fmt.Sprintf("client %d removed a key from node %d at %s, and whether it was client %d's valid one the replies do not tell", client, n, ms(r.Call), a.client)
		if touched {
			why += fmt.Sprintf(" (%q touched the node)", f.Fault)
		}
		return why, Unexplained, true
	}
	return "", "", false
}

// expired tells why a's key on node n was gone, by the node's TTL, by
// goneBy, before the other hold was granted there, while a held the lock
// or was about to: the lock kept a key its acquire outlived (own, when the
// run's correct lock counts its acquire's time: Redlock), or a fault held
// a up past it, or its work outlived it.
//
// The acquire outlived the key when the key was gone before the last reply
// a's acquire received: a correct Redlock reads its clock after that reply
// (the history's reply time comes first), from a start before its first
// command, so it counts more than a TTL and refuses, whatever the machine
// delayed. Redlock's own drift allowance (a hundredth of the TTL and 2 ms)
// is the margin.
func (p proof) expired(a hold, n int, goneBy time.Duration) (Class, string) {
	heard, ok := p.lastHeard(a)
	drift := p.ttl/100 + 2*time.Millisecond
	if _, skewed := p.skewed(a.client, a.start); ok && p.timed && goneBy+drift <= heard && !skewed {
		return Proved, fmt.Sprintf("client %d counted node %d, whose key had expired by the node's TTL at %s, %s before its acquire's last reply at %s: "+
			"a correct Redlock counts the time its acquire took against the lease and refuses it", a.client, n, ms(goneBy), ms(heard-goneBy), ms(heard))
	}
	if f, ok := p.stalled(a.client, a.start, goneBy+p.ttl/2); ok && goneBy > a.start {
		return Explained, fmt.Sprintf("client %d's key expired on node %d by %s, by the node's TTL, while %q held client %d up", a.client, n, ms(goneBy), f.Fault, a.client)
	}
	if f, ok := p.struck(a.client, a.start, goneBy, history.EffectWork); ok && p.timed {
		if why, ok := p.unrenewed(a, n, goneBy); ok {
			return Explained, fmt.Sprintf("client %d's key expired on node %d by %s, by the node's TTL, while it worked on (%s): %s",
				a.client, n, ms(goneBy), f.Fault, why)
		}
	}
	if goneBy <= a.start {
		return Unexplained, fmt.Sprintf("client %d's key expired on node %d by %s, by the node's TTL, after its acquire's last reply and %s before the acquire returned: "+
			"whether the lock counted an expired key, the replies do not tell", a.client, n, ms(goneBy), ms(a.start-goneBy))
	}
	return Unexplained, fmt.Sprintf("client %d's key expired on node %d by %s, by the node's TTL, while client %d still held the lock (since %s), "+
		"and no fault held client %d up that long: its work, or the loaded machine, outlived the key", a.client, n, ms(goneBy), a.client, ms(a.start), a.client)
}

// unrenewed says why hold a's key on node n went unrenewed until goneBy,
// when a fault explains it: the lock renews nothing there, as the run's
// correct lock, Redlock, does not; or a renewal failed while a fault
// struck that node or a's link to it. A lock whose renewals there went
// through and then stopped with no fault is left unexplained.
func (p proof) unrenewed(a hold, n int, goneBy time.Duration) (string, bool) {
	var tried []roled
	for _, r := range p.replies.byClient[a.client] {
		if r.role == RoleRenew && r.Node == n && r.Call >= a.start && r.Call <= goneBy {
			tried = append(tried, r)
		}
	}
	if len(tried) == 0 {
		return "the lock renews nothing there, as the run's correct lock, Redlock, does not", true
	}
	for _, r := range tried {
		if r.Outcome == models.OK {
			continue
		}
		for _, f := range p.faults {
			if touches(f, n) && (f.Client == a.client || f.Client < 0) && f.Call <= p.replies.returned(r.Op, nil) && f.Return >= r.Call {
				return fmt.Sprintf("its renewal there at %s failed under %q", ms(r.Call), f.Fault), true
			}
		}
	}
	return "", false
}

// lastHeard is when the last reply that hold a's acquire received came;
// false when it received none.
func (p proof) lastHeard(a hold) (time.Duration, bool) {
	call, ok := p.calledAt(a)
	if !ok {
		return 0, false
	}
	var last time.Duration
	heard := false
	for _, r := range p.replies.byClient[a.client] {
		if r.Call >= call && r.Call <= a.start && r.Return != history.NeverReturned && r.Return <= a.start {
			last, heard = max(last, r.Return), true
		}
	}
	return last, heard
}

// counted says what a lock did that is granted a key a node still held
// for another: counted a majority it did not have, on Redlock.
func (p proof) counted() string {
	if p.timed {
		return "the lock counted a majority it did not have"
	}
	return "the lock took a key another client still held"
}

// touched finds a fault that struck lock node n, its server or a link to
// it, within from..to.
func (p proof) touched(n int, from, to time.Duration) (history.Op, bool) {
	for _, f := range p.faults {
		if touches(f, n) && f.Call <= to && f.Return >= from {
			return f, true
		}
	}
	return history.Op{}, false
}

// skewed finds a skew of client's clock up to t: a lock that measures its
// acquire by that clock may count it wrong.
func (p proof) skewed(client int, t time.Duration) (history.Op, bool) {
	for _, f := range p.faults {
		if f.Client == client && f.FaultKind == "clock-skew" && f.Call <= t {
			return f, true
		}
	}
	return history.Op{}, false
}

// heldUp is how much of from..to fault f held client up. A fault on the
// whole system or on client does so throughout; but one that strikes
// through lock nodes (a paused node, latency or a black hole on a link),
// in a history that records the nodes' replies, holds the client up only
// while it had a command in flight to a node struck. It is -1 when f did
// not hold client up at all within from..to, and 0 when it did for an
// instant (a command that struck it and came back at once).
func (p proof) heldUp(f history.Op, client int, from, to time.Duration) time.Duration {
	if f.Client != client && f.Client >= 0 {
		return -1
	}
	span := history.Span{From: max(f.Call, from), To: min(f.Return, to)}
	if span.To < span.From {
		return -1
	}
	nodes, all, ok := onNodes(f)
	if !ok || all || !p.replies.any() {
		return span.To - span.From
	}
	var in []history.Span
	for _, n := range nodes {
		for _, s := range p.flights[client][n] {
			if s.To > span.From && s.From < span.To {
				in = append(in, history.Span{From: max(s.From, span.From), To: min(s.To, span.To)})
			}
		}
	}
	if len(in) == 0 {
		return -1
	}
	return total(in)
}

// nodeVerdict combines the shared nodes' cases: own when one node proves
// it, explained when every one is, with the first node that decided.
func nodeVerdict(cases []nodeCase) (Class, string) {
	if i := slices.IndexFunc(cases, func(c nodeCase) bool { return c.class == Proved }); i >= 0 {
		return Proved, cases[i].why
	}
	if len(cases) > 0 && !slices.ContainsFunc(cases, func(c nodeCase) bool { return c.class != Explained }) {
		var nodes []string
		for _, c := range cases {
			nodes = append(nodes, fmt.Sprint(c.node))
		}
		return Explained, fmt.Sprintf("on every node that granted both holds (%s) the first key was gone before the second grant; first, %s",
			strings.Join(nodes, ", "), cases[0].why)
	}
	if i := slices.IndexFunc(cases, func(c nodeCase) bool { return c.class == Unexplained }); i >= 0 {
		return Unexplained, cases[i].why
	}
	return Unexplained, ""
}
