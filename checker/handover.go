package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// minHandovers is the fewest handovers whose slow median says the lock is slow.
const minHandovers = 3

// checkHandover measures how long the lock sat idle between one holder's
// release and the next holder's acquire. A median above the bound means
// waiters are kept out of a free lock, as when holders never release and the
// lock only frees by expiry.
func checkHandover(ops []history.Op, bound time.Duration) Check {
	c := Check{Checker: CheckHandover, Verdict: OK}
	hs := holds(ops)
	faults := faultOps(ops)
	var late []history.Span
	if e := history.EndOf(ops); e != nil {
		late = append(slices.Clip(e.Late), e.Queued...)
	}
	// gaps are the handovers' idle times; excused are the same less the
	// time the machine ran the harness late, or kept a server's thread
	// waiting for a core, within each.
	var gaps, excused []time.Duration
	var firstSlow *time.Duration
	var again, crashed, overlapped, duringFault int // changes of holder left out, and why
	lastEnd := map[string]hold{}
	for _, h := range hs {
		prev, ok := lastEnd[h.key]
		lastEnd[h.key] = h
		// After a crash the wait for expiry is the point of a TTL, and so is
		// the wait while a fault holds up the holder: neither is a slow
		// handover. Overlaps are the lock checker's business.
		switch {
		case !ok:
			continue
		case prev.client == h.client:
			again++
			continue
		case prev.endedBy != history.KindRelease:
			crashed++
			continue
		case h.start < prev.end:
			overlapped++
			continue
		case faulted(faults, prev.client, prev.end, h.start):
			duringFault++
			continue
		}
		gap := h.start - prev.end
		gaps = append(gaps, gap)
		excused = append(excused, gap-within(late, prev.end, h.start))
		if gap > bound && firstSlow == nil {
			firstSlow = ptr(h.start)
		}
	}
	if len(gaps) == 0 {
		c.Detail = "no handover between two clients to judge"
		var left []string
		for _, n := range []struct {
			count int
			why   string
		}{{duringFault, "came while a fault was on"}, {crashed, "followed a crash"}, {overlapped, "overlapped the holder"}, {again, "were the same client again"}} {
			if n.count > 0 {
				left = append(left, fmt.Sprintf("%d %s", n.count, n.why))
			}
		}
		if len(left) > 0 {
			c.Detail = fmt.Sprintf("no handover to judge among %d holds: %s", len(hs), strings.Join(left, ", "))
		}
		return c
	}
	slices.Sort(gaps)
	slices.Sort(excused)
	median, p99 := gaps[len(gaps)/2], gaps[len(gaps)*99/100]
	c.Median = &median
	c.Detail = fmt.Sprintf("%d handovers: median %s, p99 %s, max %s (bound %s)",
		len(gaps), ms(median), ms(p99), ms(gaps[len(gaps)-1]), ms(bound))
	switch {
	case median > bound && len(gaps) < minHandovers:
		// A median of one or two waits is luck (which client a crash or a
		// fault left waiting), not a property of the lock.
		c.Verdict = Unknown
		c.Detail += fmt.Sprintf("; too few handovers to call the lock slow (at least %d)", minHandovers)
	case median > bound && excused[len(excused)/2] <= bound:
		// The waiters and the holder's release wait for a core as the
		// harness's timer did, and the servers as their threads did: a
		// handover slow only by that much is the machine's, not the lock's.
		c.Verdict = Unknown
		c.Detail += fmt.Sprintf("; the machine ran the run late within them (median %s without that time): "+
			"it, not the lock, may have made them slow"+runAgain, ms(excused[len(excused)/2]))
	case median > bound:
		c.Verdict, c.At = Slow, firstSlow
	}
	return c
}

// faultOps are the faults of a history, with their Return filled in.
func faultOps(ops []history.Op) []history.Op {
	last := history.Last(ops)
	var faults []history.Op
	for _, op := range ops {
		if op.Kind == history.KindFault {
			op.Return = history.Returned(op, last)
			faults = append(faults, op)
		}
	}
	return faults
}

// faulted reports whether a fault on client, or on the whole system, overlaps
// the time from..to.
func faulted(faults []history.Op, client int, from, to time.Duration) bool {
	for _, f := range faults {
		if (f.Client == client || f.Client < 0) && f.Call <= to && f.Return >= from {
			return true
		}
	}
	return false
}

// within is how much of from..to the spans cover, each instant once.
func within(spans []history.Span, from, to time.Duration) time.Duration {
	var in []history.Span
	for _, s := range spans {
		if s := (history.Span{From: max(s.From, from), To: min(s.To, to)}); s.To > s.From {
			in = append(in, s)
		}
	}
	return total(in)
}
