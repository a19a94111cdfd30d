package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// checkLiveness judges the end of the run: once the workload stopped and every
// fault was healed, each client must have finished its cycle and a fresh
// client must have got the lock, both within the bound.
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
	c.Verdict = Stuck
	var why []string
	if len(e.Stuck) > 0 {
		why = append(why, fmt.Sprintf("%s within %s", unfinished(e.Stuck), ms(e.Bound)))
	}
	if !e.Probe {
		why = append(why, fmt.Sprintf("a fresh client got no lock within %s", ms(e.Bound)))
	}
	switch {
	case !e.KeyExists:
		why = append(why, "the lock key is gone")
	case e.PTTL < 0:
		why = append(why, "the lock key has no expiry (PTTL -1)")
	default:
		why = append(why, fmt.Sprintf("the lock key has PTTL %s", ms(e.PTTL)))
	}
	c.Detail = strings.Join(why, "; ")
	c.At = ptr(lastGrant(ops))
	return c
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
