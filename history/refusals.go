package history

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/models"
)

// Refusals says how often client held the lock, and when anyone last
// held it, with what refused every acquire since: a lock that refuses
// service (WAIT with replication cut) refuses them all.
func Refusals(ops []Op, client int) string {
	held, last := 0, time.Duration(0)
	for _, op := range ops {
		if op.Kind != KindAcquire || op.Nested || op.Probe || op.Outcome != models.OK {
			continue
		}
		if op.Client == client {
			held++
		}
		last = max(last, op.Return)
	}
	refused, reasons := 0, map[string]int{}
	for _, op := range ops {
		if op.Kind != KindAcquire || op.Nested || op.Probe || op.Call <= last {
			continue
		}
		refused++
		why := op.Error
		if why == "" {
			why = "not acquired"
		}
		reasons[why]++
	}
	line := fmt.Sprintf("client %d held the lock %d time(s)", client, held)
	if refused == 0 {
		return line
	}
	why := make([]string, 0, len(reasons))
	for r, n := range reasons {
		why = append(why, fmt.Sprintf("%d× %s", n, r))
	}
	slices.Sort(why)
	return line + fmt.Sprintf("; nobody held it after %s: all %d acquires since were refused (%s)",
		last.Round(time.Millisecond), refused, strings.Join(why, "; "))
}

// Unanswered counts the commands or requests the probe (the client whose
// acquires are marked Probe) sent the lock's servers, and how many of them
// had no answer: each ended with no reply (NeverReturned).
func Unanswered(ops []Op) (sent, silent int) {
	probe := slices.IndexFunc(ops, func(op Op) bool { return op.Probe })
	if probe < 0 {
		return 0, 0
	}
	for _, op := range ops {
		if op.Client != ops[probe].Client || (op.Kind != KindReply && op.Kind != KindRequest) {
			continue
		}
		sent++
		if op.Return == NeverReturned {
			silent++
		}
	}
	return sent, silent
}

// LastSent is when the last command or request client sent its lock's
// servers in its acquire phase between from and to left it, reads left
// out (Reads): for an acquire that got the lock, the latest the one that
// took it can have left, where the history does not say which did
// (Op.Took: a lock over SQL, etcd or ZooKeeper, whose requests do not
// tell). An etcd lock that waits reads the key (RANGE) until its own
// turn comes; its lease is as old as its grant, not that last read.
func LastSent(ops []Op, client int, from, to time.Duration) (at time.Duration, ok bool) {
	for _, op := range ops {
		if op.Client == client && (op.Kind == KindReply || op.Kind == KindRequest) && op.Phase == "acquire" &&
			!Reads(op.Command) && op.Call >= from && op.Call <= to && op.Call >= at {
			at, ok = op.Call, true
		}
	}
	return at, ok
}
