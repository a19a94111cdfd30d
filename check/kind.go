package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// ProvesOwn reports whether the history alone shows the lock's own bug, one
// no correct lock shows whatever the faults did elsewhere: two clients that
// no fault touched held the lock at once while both their leases were still
// valid, or such a client's release was refused while its lease was still
// valid (someone overwrote or deleted its key). A lease counts as valid
// while its hold is younger than the workload's TTL counted from the
// acquire's call, before which no lease can have started; a fault touches a
// client when it was on the client's row, or on the whole system, at any
// time from that call on. why counts what was found and names the first.
func ProvesOwn(ops []history.Op) (why string, ok bool) {
	e := history.EndOf(ops)
	if e == nil || e.TTL <= 0 {
		return "", false
	}
	p := newProof(ops, e.TTL)
	var found []string
	if n, first := p.overlaps(); n > 0 {
		found = append(found, fmt.Sprintf("%d overlap(s) of two holds that no fault touched, both younger than the %s TTL: "+
			"first, client %d acquired %q at %s while client %d held it since %s",
			n, ms(e.TTL), first.b.client, first.b.key, ms(first.b.start), first.a.client, ms(first.a.start)))
	}
	if n, first := p.refusedReleases(ops); n > 0 {
		found = append(found, fmt.Sprintf("%d release(s) refused to a holder no fault touched, younger than the %s TTL: "+
			"someone overwrote or deleted its key; first, client %d's at %s", n, ms(e.TTL), first.Client, ms(first.Call)))
	}
	return strings.Join(found, "; "), len(found) > 0
}

// Excused reports whether every overlap of two holds in the history is one
// a correct lock shows too: the earlier holder had held the lock for longer
// than the TTL (since its acquire returned) when the later one came, and a
// fault touched it during its hold (on its row or on the whole system; slow
// work does not count, since renewing covers it). Such an overlap depends
// on where the fault fell, not on the lock, so a reference run that the
// fault happened to miss says nothing about it. why names the first overlap.
func Excused(ops []history.Op) (why string, ok bool) {
	e := history.EndOf(ops)
	if e == nil || e.TTL <= 0 {
		return "", false
	}
	p := newProof(ops, e.TTL)
	var faults []history.Op
	for _, f := range p.faults {
		if f.Fault != history.FaultSlowWork {
			faults = append(faults, f)
		}
	}
	n := 0
	for a, b := range overlapping(p.holds) {
		if b.start-a.start <= e.TTL || !faulted(faults, a.client, a.start, b.start) {
			return "", false
		}
		if n == 0 {
			why = fmt.Sprintf("client %d, struck by a fault while it held the lock, had held it %s (past the %s TTL) when client %d took it",
				a.client, ms(b.start-a.start), ms(e.TTL), b.client)
		}
		n++
	}
	return why, n > 0
}

// proof holds what ProvesOwn measures a history with.
type proof struct {
	ttl    time.Duration
	holds  []hold
	called map[holdStart]time.Duration // the call of the acquire that began each hold
	faults []history.Op                // faults and crashes, each with a Return
}

// holdStart identifies a hold by its client, key and start.
type holdStart struct {
	client int
	key    string
	start  time.Duration
}

func newProof(ops []history.Op, ttl time.Duration) proof {
	p := proof{ttl: ttl, holds: holds(ops), called: map[holdStart]time.Duration{}, faults: faultOps(ops)}
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

// valid reports whether h's lease was surely still valid at t and no fault
// touched its client from its acquire's call to t.
func (p proof) valid(h hold, t time.Duration) bool {
	from, ok := p.called[holdStart{h.client, h.key, h.start}]
	return ok && t-from < p.ttl && !faulted(p.faults, h.client, from, t)
}

type overlap struct{ a, b hold }

// overlaps counts the overlaps of two holds, each at the start of the later
// one, in which both holds were valid, and returns the first.
func (p proof) overlaps() (n int, first overlap) {
	for a, b := range overlapping(p.holds) {
		if p.valid(a, b.start) && p.valid(b, b.start) {
			if n == 0 {
				first = overlap{a, b}
			}
			n++
		}
	}
	return n, first
}

// refusedReleases counts the releases refused while their hold was valid
// up to the release's return, and returns the first.
func (p proof) refusedReleases(ops []history.Op) (n int, first history.Op) {
	for _, op := range ops {
		if op.Kind != history.KindRelease || op.Outcome != models.Failed || op.Return == history.NeverReturned {
			continue
		}
		for _, h := range p.holds {
			if h.client == op.Client && h.key == op.Key && h.start <= op.Call && op.Call <= h.end && p.valid(h, op.Return) {
				if n == 0 {
					first = op
				}
				n++
				break
			}
		}
	}
	return n, first
}
