package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Class is what the history alone makes of one overlap of two holds.
type Class string

const (
	// Proved: both leases were valid and no fault held up either holder
	// or lost the lock's state meanwhile. No correct lock shows it.
	Proved Class = "proved"
	// Explained: a fault explains it, as it would for any lock of the
	// kind: the earlier holder stalled past its lease, the lock's state
	// was lost on a node while its lease was on it, or the reply that
	// granted the later holder its lease came after the lease ran out.
	Explained Class = "explained"
	// Unexplained: neither; only a reference run can tell.
	Unexplained Class = "unexplained"
)

// Overlap is two clients' holds of one key at once, and what the history
// makes of it.
type Overlap struct {
	Earlier, Later Hold
	Class          Class
	// Why says which fault explains an explained overlap and how; for
	// one judged node by node, which node decided it and why, or, left
	// unexplained, what the replies could not tell.
	Why string
}

// Judgement is what the history alone says of whose fault a failing safety
// verdict is: every overlap of two holds, judged, and the releases refused
// to a holder whose lease was valid.
type Judgement struct {
	TTL      time.Duration
	Overlaps []Overlap
	// Refused are the releases refused to a holder no stall, delay or loss
	// fault touched, inside its lease: someone overwrote or deleted its key.
	Refused []history.Op
}

// judge classes the overlap of a, the earlier hold, and b (see Judge):
// node by node first, where the lock nodes' replies show nodes that
// granted both; then by the clients' leases and the faults on them.
func (p proof) judge(a, b hold) (Class, string) {
	cases := p.shared(a, b)
	class, why := nodeVerdict(cases)
	if class != Unexplained {
		return class, why
	}
	if p.valid(a, b.start) && p.valid(b, b.start) {
		return Proved, ""
	}
	if explained, ok := p.explain(a, b, cases); ok {
		return Explained, explained
	}
	return Unexplained, why
}

// Judge judges every overlap of two holds in ops, in order of the later
// hold's start, against the workload's TTL (from the end record). A lease
// counts as valid while its hold is younger than the TTL counted from its
// acquire's call, before which no lease can have started. What a fault can
// do is its history.Effect: a stall or a delay (on a client's row, or on
// the whole system) holds its clients up, and a delay can also hand a
// client a reply late; a loss drops or shortens the lock's state on a
// node; a stage fault and slow work do neither by themselves. An overlap
// is, in this order:
//
//   - proved, when both holds were valid at the later one's start and no
//     stall, delay or loss touched either from its acquire's call to then;
//   - explained, when the earlier holder was stalled or delayed during its
//     hold, by one fault for at least half a TTL (a renewing lock renews
//     more often than that), and its lease, as old as the command that
//     took the key (or else the hold), was older than the TTL when the
//     later came;
//     or a loss began after the earlier holder's acquire was called and
//     before the later hold started, while the earlier lease could still
//     be on the node (younger than the TTL, or with no slow work that might
//     have let it go unrenewed); or the later acquire took longer than the
//     TTL and was delayed meanwhile, so that the reply granting its lease
//     may have come after the lease ran out (a dropped reply cannot do
//     that: an acquire that takes a lost reply for success is the lock's
//     own doing), unless the run's correct lock counts its acquire's time
//     against the lease (End.Timed: Redlock), which refuses such a grant;
//   - unexplained otherwise, and always without an end record to give the
//     TTL.
//
// Where the history records each lock node's replies (Redlock's five
// masters, the replicated topology's data node), an overlap is first
// judged node by node, on each node where both holds were granted (a
// shared node): the earlier hold's key must have left it before the later
// was granted. It is proved when on some shared node the earlier key was
// still valid by the node's own TTL (counted from the call of the command
// that set or last renewed it) when the later grant's reply came and no
// fault touched that node, or another client removed the earlier key there
// while it was valid, or the earlier holder counted a node whose key had
// expired before its acquire's last reply came while the run's correct
// lock counts its acquire's time (End.Timed). It is explained when on every shared node the key was lost
// first: a loss fault on that node, the holder's own release, or its
// expiry while a fault held the holder up (or, under Redlock, which does
// not renew, while it worked on). Otherwise the first node left open says
// what the replies could not tell (Overlap.Why), and the rules above
// decide, a loss counting only on a shared node.
//
// A fault that strikes through lock nodes (a paused node, latency or a
// black hole on a link) holds a client up, in a history with replies, only
// while that client had a command in flight to a node struck.
//
// Faults recorded without an effect (histories from before effects) count
// as stalls, as every fault but slow work did then.
func Judge(ops []history.Op) Judgement {
	var ttl time.Duration
	timed := false
	if e := history.EndOf(ops); e != nil {
		ttl, timed = e.TTL, e.Timed
	}
	p := newProof(ops, ttl)
	p.timed = timed
	j := Judgement{TTL: ttl}
	for a, b := range overlapping(p.holds) {
		o := Overlap{Earlier: a.export(), Later: b.export(), Class: Unexplained}
		if ttl > 0 {
			o.Class, o.Why = p.judge(a, b)
		}
		j.Overlaps = append(j.Overlaps, o)
	}
	if ttl > 0 {
		j.Refused = p.refusedReleases(ops)
	}
	return j
}

// Count is how many overlaps are of class c.
func (j Judgement) Count(c Class) int {
	n := 0
	for _, o := range j.Overlaps {
		if o.Class == c {
			n++
		}
	}
	return n
}

// first is the first overlap of class c.
func (j Judgement) first(c Class) (Overlap, bool) {
	for _, o := range j.Overlaps {
		if o.Class == c {
			return o, true
		}
	}
	return Overlap{}, false
}

// Proof reports whether the history alone shows the lock's own bug, one no
// correct lock shows whatever the faults did elsewhere: a proved overlap,
// or a release refused to a valid holder. why counts what was found and
// names the first.
func (j Judgement) Proof() (why string, ok bool) {
	var found []string
	if o, ok := j.first(Proved); ok && o.Why != "" {
		found = append(found, fmt.Sprintf("%d overlap(s) of two holds that the lock nodes' replies prove: first, %s: %s", j.Count(Proved), o.story(), o.Why))
	} else if ok {
		found = append(found, fmt.Sprintf("%d overlap(s) of two holds that no stall, delay or loss fault touched, both younger than the %s TTL: "+
			"first, %s", j.Count(Proved), ms(j.TTL), o.story()))
	}
	if n := len(j.Refused); n > 0 {
		first := j.Refused[0]
		found = append(found, fmt.Sprintf("%d release(s) refused to a holder no stall, delay or loss fault touched, younger than the %s TTL: "+
			"someone overwrote or deleted its key; first, client %d's at %s", n, ms(j.TTL), first.Client, ms(first.Call)))
	}
	return strings.Join(found, "; "), len(found) > 0
}

// Explanation reports whether the history alone shows that the faults beat
// the lock as they would any lock of its kind: there is at least one
// overlap and a fault explains each. why names the first overlap and its
// fault.
func (j Judgement) Explanation() (why string, ok bool) {
	if len(j.Overlaps) == 0 || j.Count(Explained) < len(j.Overlaps) {
		return "", false
	}
	o := j.Overlaps[0]
	return fmt.Sprintf("%d overlap(s), a fault explains each; first, %s: %s", len(j.Overlaps), o.story(), o.Why), true
}

// Undecided says, in one line, what the history could not decide of its
// first unexplained overlap: which node and which reply left it open, or
// that no reply or fault explains it. "" when every overlap is decided.
func (j Judgement) Undecided() string {
	o, ok := j.first(Unexplained)
	if !ok {
		return ""
	}
	why := o.Why
	if why == "" {
		why = "no fault explains it, and no node's replies decide it"
	}
	return fmt.Sprintf("%d overlap(s) the history cannot decide; first, %s: %s", j.Count(Unexplained), o.story(), why)
}

// story tells an overlap in one clause.
func (o Overlap) story() string {
	return fmt.Sprintf("client %d acquired %q at %s while client %d held it since %s",
		o.Later.Client, o.Later.Key, ms(o.Later.Start), o.Earlier.Client, ms(o.Earlier.Start))
}

// ProvesOwn reports whether the history alone shows the lock's own bug (see
// Judge and Judgement.Proof).
func ProvesOwn(ops []history.Op) (why string, ok bool) {
	return Judge(ops).Proof()
}

// effect is how fault f bears on a lock's safety. A crash ends its
// client's holds, as a stall that never ends would; a fault recorded
// without an effect counts as a stall, as it did before effects, but for
// slow work.
func effect(f history.Op) history.Effect {
	switch {
	case f.Kind == history.KindCrash:
		return history.EffectStall
	case f.FaultKind == "slow-work" && f.Part == "":
		return history.EffectWork
	case f.Effect == "":
		return history.EffectStall
	}
	return f.Effect
}

// proof holds what Judge measures a history with.
type proof struct {
	ttl    time.Duration
	timed  bool // a correct lock refuses a lease granted late (history.End.Timed)
	ops    []history.Op
	holds  []hold
	called map[holdStart]time.Duration // the call of the acquire that began each hold
	faults []history.Op                // faults and crashes, each with a Return
	// replies are the lock nodes' replies, and flights when each client
	// had a command in flight to each node.
	replies replies
	flights map[int]map[int][]history.Span
}

// holdStart identifies a hold by its client, key and start.
type holdStart struct {
	client int
	key    string
	start  time.Duration
}

func newProof(ops []history.Op, ttl time.Duration) proof {
	p := proof{ttl: ttl, ops: ops, holds: holds(ops), called: map[holdStart]time.Duration{}, faults: faultOps(ops),
		replies: newReplies(ops, ttl), flights: map[int]map[int][]history.Span{}}
	for client := range p.replies.byClient {
		p.flights[client] = p.replies.inFlight(client, ops)
	}
	for _, op := range ops {
		switch {
		case op.Kind == history.KindAcquire && op.Outcome == models.OK:
			p.called[holdStart{op.Client, op.Key, op.Return}] = op.Call
		case op.Kind == history.KindCrash:
			op.Return = op.Call
			p.faults = append(p.faults, op)
		}
	}
	return p
}

// calledAt is the call of the acquire that began h.
func (p proof) calledAt(h hold) (time.Duration, bool) {
	from, ok := p.called[holdStart{h.client, h.key, h.start}]
	return from, ok
}

// struck finds a fault of one of the effects on client, or on the whole
// system, that overlaps from..to.
// A stall or delay that strikes through lock nodes counts only while it
// held client up (heldUp); a loss counts wherever it struck.
func (p proof) struck(client int, from, to time.Duration, effects ...history.Effect) (history.Op, bool) {
	for _, f := range p.faults {
		e := effect(f)
		if !slices.Contains(effects, e) || f.Call > to || f.Return < from || (f.Client != client && f.Client >= 0) {
			continue
		}
		if (e == history.EffectStall || e == history.EffectDelay) && p.heldUp(f, client, from, to) < 0 {
			continue
		}
		return f, true
	}
	return history.Op{}, false
}

// stalled finds a stall or delay on client, or on the whole system, that
// held it up for at least half a TTL of from..to: a renewing lock renews
// at least that often, so a shorter stall (a brief cut, a lost reply the
// client gave up on at once) leaves a correct lock its lease, and an
// overlap after it is not the stall's doing.
func (p proof) stalled(client int, from, to time.Duration) (history.Op, bool) {
	for _, f := range p.faults {
		e := effect(f)
		if (e == history.EffectStall || e == history.EffectDelay) && p.heldUp(f, client, from, to) >= p.ttl/2 {
			return f, true
		}
	}
	return history.Op{}, false
}

// valid reports whether h's lease was surely still valid at t and no
// stall, delay or loss touched its client from its acquire's call to t.
func (p proof) valid(h hold, t time.Duration) bool {
	from, ok := p.calledAt(h)
	if !ok || t-from >= p.ttl {
		return false
	}
	_, struck := p.struck(h.client, from, t, history.EffectStall, history.EffectDelay, history.EffectLoss)
	return !struck
}

// explain finds the fault that explains the overlap of a and b, a the
// earlier hold, as Judge describes; a loss counts only on a node of
// shared, when the replies showed some.
func (p proof) explain(a, b hold, shared []nodeCase) (why string, ok bool) {
	// The lease is as old as the command that took the key (leased), which
	// may be older than the hold: counted from the acquire's return, a
	// later holder that the server let in only once the lease ran out comes
	// up to the command's round trip short of a TTL.
	// Where no command was seen to take the key, the last the acquire sent
	// (an SQL INSERT whose reply the machine held up) is as old.
	leased := a.leased()
	if from, ok := p.calledAt(a); ok && a.took == 0 {
		if at, sent := history.LastSent(p.ops, a.client, from, a.start); sent {
			leased = at
		}
	}
	if age := b.start - leased; age > p.ttl {
		if f, ok := p.stalled(a.client, a.start, b.start); ok {
			return fmt.Sprintf("client %d, struck by %q at %s while it held the lock, had a lease up to %s old (past the %s TTL) when client %d took it",
				a.client, f.Fault, ms(f.Call), ms(age), ms(p.ttl), b.client), true
		}
	}
	if aCall, ok := p.calledAt(a); ok {
		for _, f := range p.faults {
			if effect(f) != history.EffectLoss || (f.Client >= 0 && f.Client != a.client) || f.Call < aCall || f.Call >= b.start {
				continue
			}
			if shared != nil && !slices.ContainsFunc(shared, func(c nodeCase) bool { return touches(f, c.node) }) {
				continue
			}
			age := f.Call - aCall
			if _, slow := p.struck(a.client, aCall, f.Call, history.EffectWork); age >= p.ttl && slow {
				// Slow work alone may have let the lease go unrenewed
				// before the loss: that is not the loss's doing.
				continue
			}
			return fmt.Sprintf("%q, which can lose the lock's state on a node, began at %s, %s after client %d asked for the lock, "+
				"while its lease could still be on the node", f.Fault, ms(f.Call), ms(age), a.client), true
		}
	}
	if bCall, ok := p.calledAt(b); ok && !p.timed {
		if took := b.start - bCall; took > p.ttl {
			if f, ok := p.struck(b.client, bCall, b.start, history.EffectDelay); ok {
				return fmt.Sprintf("client %d's acquire took %s (past the %s TTL) and %q struck it meanwhile: "+
					"its lease could have run out before it knew it held the lock", b.client, ms(took), ms(p.ttl), f.Fault), true
			}
		}
	}
	return "", false
}

// refusedReleases lists the releases refused while their hold was valid
// up to the release's return.
func (p proof) refusedReleases(ops []history.Op) []history.Op {
	var out []history.Op
	for _, op := range ops {
		if op.Kind != history.KindRelease || op.Outcome != models.Failed || op.Return == history.NeverReturned {
			continue
		}
		for _, h := range p.holds {
			if h.client == op.Client && h.key == op.Key && h.start <= op.Call && op.Call <= h.end && p.valid(h, op.Return) {
				out = append(out, op)
				break
			}
		}
	}
	return out
}
