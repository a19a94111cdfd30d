package models

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// SectionInput is the input of one critical section on the inventory, from
// its read to its write.
type SectionInput struct {
	Client int
	Token  uint64 // fencing token, 0 when none
}

// SectionResult says what became of a critical section's write.
type SectionResult string

const (
	Wrote        SectionResult = "wrote"    // wrote Written
	NoWrite      SectionResult = "no-write" // read only: sold out, or the client stopped/crashed before writing
	Rejected     SectionResult = "rejected" // the resource refused the write (stale fencing token)
	WriteUnknown SectionResult = "unknown"  // the write's outcome is unknown
)

// SectionOutput is what one critical section saw and did.
type SectionOutput struct {
	Observed int64 // stock read at the start of the section
	Written  int64 // stock written (meaningful for Wrote and WriteUnknown)
	Result   SectionResult
}

// InventoryModel returns the model of the inventory: a single stock counter
// starting at initial.
//
// A history is legal when some order of the critical sections, consistent
// with real time, makes every read see the write before it. Overlapping
// sections that both read 5 and wrote 4 are a lost update; overlapping
// sections that happened to serialize are fine.
func InventoryModel(initial int64) porcupine.Model {
	m := porcupine.NondeterministicModel{
		Init:              func() []any { return []any{initial} },
		Step:              stepInventory,
		Equal:             func(a, b any) bool { return a.(int64) == b.(int64) },
		Hash:              func(state any) uint64 { return uint64(state.(int64)) * 0x9e3779b97f4a7c15 },
		DescribeOperation: describeSection,
		DescribeState:     func(state any) string { return fmt.Sprintf("stock %d", state.(int64)) },
	}
	return m.ToModel()
}

func stepInventory(state, input, output any) []any {
	stock := state.(int64)
	out := output.(SectionOutput)
	if out.Observed != stock {
		return nil
	}
	switch out.Result {
	case Wrote:
		return []any{out.Written}
	case NoWrite, Rejected:
		return []any{stock}
	case WriteUnknown:
		// A timed-out write may or may not have landed; later reads
		// decide which.
		return []any{stock, out.Written}
	}
	panic(fmt.Sprintf("models: unknown section result %q", out.Result))
}

func describeSection(input, output any) string {
	in := input.(SectionInput)
	out := output.(SectionOutput)
	var did string
	switch out.Result {
	case Wrote:
		did = fmt.Sprintf("wrote %d", out.Written)
	case NoWrite:
		did = "no write"
	case WriteUnknown:
		did = fmt.Sprintf("unknown write %d", out.Written)
	default:
		did = string(out.Result)
	}
	s := fmt.Sprintf("c%d read %d → %s", in.Client, out.Observed, did)
	if in.Token != 0 {
		s += fmt.Sprintf(" (token %d)", in.Token)
	}
	return s
}
