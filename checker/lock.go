package checker

import (
	"fmt"
	"iter"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// checkLock asks porcupine whether every lock operation fits the owner-aware
// reentrant lock model: mutual exclusion as the clients believed it.
func checkLock(ops []history.Op, timeout time.Duration) (Check, *linearization) {
	last := history.Last(ops)
	var operations []porcupine.Operation
	unknown := 0
	for _, op := range ops {
		var in models.LockInput
		switch {
		case op.Kind == history.KindAcquire && op.Outcome != models.OK:
			// A refused or unknown acquire changes nothing in the model, so it
			// cannot make a history illegal. Leaving it out keeps the search
			// small: hundreds of unknown acquires that all last to the end of
			// the history would make porcupine try their every order.
			if op.Outcome == models.Unknown {
				unknown++
			}
			continue
		case op.Kind == history.KindAcquire:
			in = models.LockInput{Op: models.Acquire, Client: op.Client, Key: op.Key}
		case op.Kind == history.KindRelease:
			in = models.LockInput{Op: models.Release, Client: op.Client, Key: op.Key}
		case op.Kind == history.KindCrash:
			in = models.LockInput{Op: models.Crash, Client: op.Client}
		default:
			continue
		}
		operations = append(operations, porcupine.Operation{ClientId: op.Client, Input: in, Call: int64(op.Call),
			Output: models.LockOutput{Outcome: op.Outcome}, Return: int64(history.Returned(op, last))})
	}
	model := models.LockModel()
	res, info := porcupine.CheckOperationsVerbose(model, operations, timeout)
	lin := &linearization{model: model, info: info}
	c := Check{Checker: CheckLock}
	switch res {
	case porcupine.Ok:
		c.Verdict, c.Detail = OK, fmt.Sprintf("%d lock operations: one holder at a time", len(operations))
		if unknown > 0 {
			c.Detail += fmt.Sprintf(" (%d acquires with unknown outcome, which change nothing, are in history.jsonl only)", unknown)
		}
	case porcupine.Illegal:
		c.Verdict = Illegal
		c.Detail = "two clients believed they held the lock at once"
		if a, b, ok := firstOverlap(holds(ops)); ok {
			c.At = ptr(b.start)
			c.Detail = fmt.Sprintf("client %d acquired %q at %s while client %d held it since %s",
				b.client, b.key, ms(b.start), a.client, ms(a.start))
		}
	default:
		c.Verdict, c.Detail = Unknown, fmt.Sprintf("porcupine gave no answer within %s", timeout)
	}
	return c, lin
}

// overlapping yields, in order of the later one's start, every two holds
// of different clients on one key where the later began before the
// earlier ended; holds must be sorted by start.
func overlapping(hs []hold) iter.Seq2[hold, hold] {
	return func(yield func(earlier, later hold) bool) {
		for j, b := range hs {
			for _, a := range hs[:j] {
				if a.key == b.key && a.client != b.client && a.end > b.start && !yield(a, b) {
					return
				}
			}
		}
	}
}

// firstOverlap finds the earliest hold that began while another client's
// hold on the same key was still going; holds must be sorted by start.
func firstOverlap(hs []hold) (earlier, later hold, ok bool) {
	for a, b := range overlapping(hs) {
		return a, b, true
	}
	return hold{}, hold{}, false
}

// ms prints a time since the start in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
