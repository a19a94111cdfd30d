package checker

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// checkLiveness judges the end of the run: once the workload stopped and every
// fault was healed, each client must have finished its cycle and a fresh
// client must have got the lock, both within the bound of the machine's
// time. A wait that the machine ran so late that it ended with less than
// the bound of its own time proves nothing: unknown, run again.
func checkLiveness(ops []history.Op) Check {
	c := Check{Checker: CheckLiveness}
	e := history.EndOf(ops)
	if e == nil {
		c.Verdict, c.Detail = Unknown, "the run ended before the liveness probe"
		return c
	}
	if e.Probe && len(e.Stuck) == 0 {
		c.Verdict, c.Detail = OK, fmt.Sprintf("a fresh client got the lock after %s", ms(e.ProbeWait))
		return c
	}
	var why, starved []string
	if len(e.Stuck) > 0 {
		if short(e.Waited, e.WaitLate, e.Bound) {
			starved = append(starved, unfinished(e.Stuck)+lateWait(e.Waited, e.WaitLate))
		} else {
			why = append(why, fmt.Sprintf("%s within %s", unfinished(e.Stuck), ms(e.Bound))+lateWait(e.Waited, e.WaitLate))
		}
	}
	if !e.Probe {
		if short(e.ProbeWait, e.ProbeLate, e.Bound) {
			starved = append(starved, "a fresh client got no lock"+lateWait(e.ProbeWait, e.ProbeLate))
		} else {
			why = append(why, fmt.Sprintf("a fresh client got no lock within %s", ms(e.Bound))+lateWait(e.ProbeWait, e.ProbeLate))
		}
	}
	// The probe never learned whether the lock was free when its servers,
	// which hold the lock for nobody, were silent: to every one of its
	// commands, or to some while the machine ran most of its wait late. A
	// lock is stuck when its servers refuse a fresh client.
	sent, silent := history.Unanswered(ops)
	if !e.Probe && !e.Held && len(e.Stuck) == 0 && silent > 0 && len(why) > 0 && (silent == sent || 2*e.ProbeLate >= e.ProbeWait) {
		c.Verdict, c.Detail = Unknown, strings.Join(why, "; ")+fmt.Sprintf(", and %d of its %d commands to the servers, "+
			"which hold the lock for nobody, had no reply: the servers, or the machine under them, did not answer in time", silent, sent)
		if e.ProbeLate > 0 {
			c.Detail += runAgain
		}
		return c
	}
	if len(why) == 0 {
		c.Verdict = Unknown
		c.Detail = strings.Join(starved, "; ") + fmt.Sprintf(": less than the %s bound of the machine's own time, too little to call the lock stuck"+runAgain, ms(e.Bound))
		return c
	}
	c.Verdict = Stuck
	switch {
	case !e.Held:
		why = append(why, "the servers hold the lock for nobody")
	case !e.Expires:
		why = append(why, "the servers still hold the lock, with no expiry")
	default:
		why = append(why, fmt.Sprintf("the servers still hold the lock, for %s more", ms(e.Left)))
	}
	c.Detail = strings.Join(why, "; ")
	c.At = ptr(lastGrant(ops))
	return c
}

// short reports whether a wait for the clients or the probe ended, cut at
// its most on the clock, before bound of the machine's own time had passed.
func short(waited, late, bound time.Duration) bool {
	return waited >= bound && waited-late < bound
}

// lateWait says how long a wait lasted on the clock when the machine ran
// part of it late, and nothing when it did not.
func lateWait(waited, late time.Duration) string {
	if late < time.Millisecond {
		return ""
	}
	return fmt.Sprintf(" (waited %s, of which the machine ran %s late)", ms(waited), ms(late))
}

// lastGrant is when the lock was last granted to or freed by a workload
// client: from then on nobody got it.
func lastGrant(ops []history.Op) (at time.Duration) {
	for _, op := range ops {
		switch {
		case op.Probe:
		case op.Kind == history.KindAcquire && op.Outcome == models.OK:
			at = max(at, op.Return)
		case op.Kind == history.KindCrash:
			at = max(at, op.Call)
		}
	}
	return at
}

// unfinished says which clients did not finish: "client 2 did not finish
// its critical section", "clients 0 and 2 did not finish theirs".
func unfinished(clients []int) string {
	if len(clients) == 1 {
		return fmt.Sprintf("client %d did not finish its critical section", clients[0])
	}
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i] = fmt.Sprint(c)
	}
	return fmt.Sprintf("clients %s and %s did not finish their critical sections",
		strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}
