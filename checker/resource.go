package checker

import (
	"fmt"
	"sort"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// checkResource asks porcupine whether the critical sections on the
// inventory could have run one at a time, and counts from the end state how
// many sales were lost or oversold.
func checkResource(ops []history.Op, opts Options) (Check, *linearization) {
	last := history.Last(ops)
	var sections []history.Op
	var operations []porcupine.Operation
	sold := 0
	for _, op := range ops {
		if op.Kind != history.KindSection {
			continue
		}
		sections = append(sections, op)
		if op.Result == models.Wrote {
			sold++
		}
		operations = append(operations, porcupine.Operation{ClientId: op.Client,
			Input: models.SectionInput{Client: op.Client, Token: op.Token}, Call: int64(op.Call),
			Output: models.SectionOutput{Observed: op.Observed, Written: op.Written, Result: op.Result},
			Return: int64(history.Returned(op, last))})
	}
	model := models.InventoryModel(opts.Initial)
	res, info := porcupine.CheckOperationsVerbose(model, operations, opts.Timeout)
	lin := &linearization{model: model, info: info}
	c := Check{Checker: CheckResource, Verdict: OK}

	var lost, oversold int64
	if e := history.EndOf(ops); e != nil {
		lost = int64(sold) - (e.Initial - e.Stock)
		oversold = max(0, int64(sold)-e.Initial)
	}
	switch {
	case res == porcupine.Illegal || lost > 0 || oversold > 0:
		c.Verdict = Illegal
		updates := "lost updates"
		if lost == 1 {
			updates = "lost update"
		}
		c.Detail = fmt.Sprintf("%d sales, %d %s, %d oversold", sold, lost, updates, oversold)
		if a, b, ok := firstLostUpdate(sections); ok {
			c.At = ptr(b.Return)
			c.Detail += fmt.Sprintf("; clients %d and %d both read stock %d and wrote %d", a.Client, b.Client, b.Observed, b.Written)
		}
	case res == porcupine.Unknown:
		c.Verdict, c.Detail = Unknown, fmt.Sprintf("porcupine gave no answer within %s", opts.Timeout)
	default:
		ran := fmt.Sprintf("%d critical sections ran", len(operations))
		if len(operations) == 1 {
			ran = "1 critical section ran"
		}
		c.Detail = fmt.Sprintf("%s one at a time; %d sales, none lost", ran, sold)
	}
	return c, lin
}

// firstLostUpdate finds the first section that wrote over a value another
// section had already read and written from: two sales, one decrement.
func firstLostUpdate(sections []history.Op) (earlier, later history.Op, ok bool) {
	sorted := append([]history.Op(nil), sections...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Return < sorted[j].Return })
	seen := map[int64]history.Op{}
	for _, op := range sorted {
		if op.Result != models.Wrote {
			continue
		}
		if first, dup := seen[op.Observed]; dup {
			return first, op, true
		}
		seen[op.Observed] = op
	}
	return history.Op{}, history.Op{}, false
}
