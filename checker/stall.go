package checker

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
)

// stalled reports whether the first violation the checker found is explained
// by the machine rather than by the lock: a holder in it had held the lock
// past its TTL only because its cycle took longer than its work and every
// fault on it (or on the whole system) together. A loaded host can stall a
// goroutine for hundreds of milliseconds; the harness must not blame the lock
// for its own host. The stall is measured from the workload's own timestamps.
func stalled(ops []history.Op, checker string) (string, bool) {
	e := history.EndOf(ops)
	if e == nil || e.TTL == 0 {
		return "", false
	}
	hs := holds(ops)
	faults := faultOps(ops)
	// A fault through lock nodes held a client up only while it waited on
	// one of them (heldUp), where the history records the nodes' replies.
	rs := newReplies(ops, e.TTL)
	flights := map[int]map[int][]history.Span{}
	for client := range rs.byClient {
		flights[client] = rs.inFlight(client, ops)
	}
	// suspects are the holds whose lease may have run out, each up to the
	// moment the violation needed it to have run out.
	type suspect struct {
		h    hold
		upTo time.Duration
		// granted marks the later hold of an overlap, whose lease can have
		// run out only inside its own acquire, between the command that
		// took the key and the acquire's return: the lock's own code ran
		// there too (a Redlock's other nodes), so only the stretches the
		// lag meter saw the machine run late there excuse it.
		granted bool
	}
	var suspects []suspect
	switch checker {
	case CheckLock:
		if a, b, ok := firstOverlap(hs); ok {
			suspects = append(suspects, suspect{h: a, upTo: b.start}, suspect{h: b, upTo: b.start, granted: true})
		}
	case CheckResource:
		if a, b, ok := firstLostUpdate(sectionOps(ops)); ok {
			for _, s := range []history.Op{a, b} {
				if h, ok := holdAround(hs, s); ok {
					suspects = append(suspects, suspect{h: h, upTo: s.Return})
				}
			}
		}
	}
	late := append(slices.Clip(e.Late), e.Queued...)
	for _, s := range suspects {
		// The lease is as old as the command that took the key: a reply
		// the machine delayed ages it before the acquire returns.
		from := s.h.leased()
		held := s.upTo - from
		// Time the holder spent asking the lock again (a nested acquire
		// waiting for a non-reentrant lock) is the lock's doing, not the
		// machine's.
		accounted := faultedFor(faults, flights[s.h.client], s.h.client, from, s.upTo) + lockCallsFor(ops, s.h.client, from, s.upTo)
		// A few milliseconds of round trips to Redis and MariaDB are not a
		// stall; a stall worth the name is a sizeable part of the lease.
		// The later hold of an overlap has done no work yet.
		work := e.Work
		if s.granted {
			work = 0
		}
		stall := held - work - accounted
		if held <= e.TTL || work+accounted >= e.TTL || stall < e.TTL/4 {
			continue
		}
		lagged := within(late, from, s.upTo)
		if s.granted && lagged < stall/2 {
			continue
		}
		if waited := harnessHeld(faults, s.h.client, from, s.upTo); waited >= stall/2 {
			return fmt.Sprintf("the harness held client %d for %s while it injected a fault at its failpoint, longer than the scenario "+
				"plans (a slow restart on a loaded machine): it had held the lock %s for %s of work, past its %s TTL"+runAgain,
				s.h.client, ms(waited), ms(held), ms(e.Work), ms(e.TTL)), true
		}
		if s.granted {
			return fmt.Sprintf("the machine stalled client %d for %s inside its acquire: it returned %s after the command that "+
				"took the key left it, past its %s TTL, with no fault on it, and the machine ran late for %s of that"+runAgain,
				s.h.client, ms(stall), ms(held), ms(e.TTL), ms(lagged)), true
		}
		return fmt.Sprintf("the machine stalled client %d for %s: it had held the lock %s for %s of work, "+
			"past its %s TTL, with no fault on it"+runAgain, s.h.client, ms(stall), ms(held), ms(e.Work), ms(e.TTL)), true
	}
	return "", false
}

// lockCallsFor is how much of from..to client spent taking the lock again
// inside its hold: from its first nested acquire to the return of its last,
// retry waits included.
func lockCallsFor(ops []history.Op, client int, from, to time.Duration) time.Duration {
	last := history.Last(ops)
	first, end := to, from
	for _, op := range ops {
		if op.Client != client || op.Kind != history.KindAcquire || !op.Nested {
			continue
		}
		if ret := history.Returned(op, last); op.Call < to && ret > from {
			first, end = min(first, max(op.Call, from)), max(end, min(ret, to))
		}
	}
	return max(end-first, 0)
}

// holdAround finds the hold of section s's client that contains s.
func holdAround(hs []hold, s history.Op) (hold, bool) {
	for _, h := range hs {
		if h.client == s.Client && h.start <= s.Call && s.Call <= h.end {
			return h, true
		}
	}
	return hold{}, false
}

// sectionOps are the critical sections of a history.
func sectionOps(ops []history.Op) []history.Op {
	var out []history.Op
	for _, op := range ops {
		if op.Kind == history.KindSection {
			out = append(out, op)
		}
	}
	return out
}

// faultedFor is how much of from..to a fault on client, or on the whole
// system, covered, less the time the harness itself held client (which
// covers the fault it was injecting: that time is the machine's). A fault
// through lock nodes covers, when flights (client's commands in flight, by
// node) says anything, only the time client waited on a node it struck.
func faultedFor(faults []history.Op, flights map[int][]history.Span, client int, from, to time.Duration) time.Duration {
	var covered, held []history.Span
	for _, f := range faults {
		if f.Client != client && f.Client >= 0 {
			continue
		}
		s := history.Span{From: max(f.Call, from), To: min(f.Return, to)}
		nodes, all, through := onNodes(f)
		switch {
		case s.To <= s.From:
		case f.Effect == history.EffectHarness:
			held = append(held, s)
		case through && !all && len(flights) > 0 && effect(f) != history.EffectLoss:
			for _, n := range nodes {
				for _, w := range flights[n] {
					if in := (history.Span{From: max(w.From, s.From), To: min(w.To, s.To)}); in.To > in.From {
						covered = append(covered, in)
					}
				}
			}
		default:
			covered = append(covered, s)
		}
	}
	return total(append(covered, held...)) - total(held)
}

// harnessHeld is how much of from..to the harness held client.
func harnessHeld(faults []history.Op, client int, from, to time.Duration) time.Duration {
	var held []history.Span
	for _, f := range faults {
		if f.Client == client && f.Effect == history.EffectHarness && f.Call < to && f.Return > from {
			held = append(held, history.Span{From: max(f.Call, from), To: min(f.Return, to)})
		}
	}
	return total(held)
}

// merged is spans with the overlapping ones joined, in order.
func merged(spans []history.Span) []history.Span {
	spans = slices.Clone(spans)
	slices.SortFunc(spans, func(a, b history.Span) int { return cmp.Compare(a.From, b.From) })
	var out []history.Span
	for _, s := range spans {
		if n := len(out); n > 0 && s.From <= out[n-1].To {
			out[n-1].To = max(out[n-1].To, s.To)
			continue
		}
		out = append(out, s)
	}
	return out
}

// total is the time spans cover, each instant once.
func total(spans []history.Span) time.Duration {
	var d time.Duration
	for _, s := range merged(spans) {
		d += s.To - s.From
	}
	return d
}
