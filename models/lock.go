package models

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// Outcome is what the caller of an operation saw.
type Outcome string

const (
	OK      Outcome = "ok"      // the operation took effect
	Failed  Outcome = "fail"    // it did not take effect (e.g. lock held by another owner)
	Unknown Outcome = "unknown" // timeout or lost reply: it may or may not have taken effect
)

// LockOp names a lock operation.
type LockOp string

const (
	Acquire LockOp = "acquire"
	Release LockOp = "release"
	Crash   LockOp = "crash" // the client crashed: every hold it had ends. Key is "".
)

// LockInput is the input of one lock operation (porcupine Operation.Input).
type LockInput struct {
	Op     LockOp
	Client int
	Key    string
}

// LockOutput is the output of one lock operation (porcupine Operation.Output).
type LockOutput struct {
	Outcome Outcome
}

// LockState is the state of one key: who holds it and how many times
// (reentrancy).
type LockState struct {
	Holder int // -1 when free
	Count  int
}

// LockModel returns the owner-aware, reentrant lock model, partitioned by key.
//
// The model tracks what clients believe, not what Redis stores: a history is
// illegal when two clients can only have believed they held the same key at
// one moment. Lease expiry is left out on purpose, since a client that still
// acts on an expired lease while another acquires is exactly the pitfall.
func LockModel() porcupine.Model {
	return porcupine.Model{
		Partition:         partitionByKey,
		Init:              func() any { return LockState{Holder: -1} },
		Step:              stepLock,
		Equal:             func(a, b any) bool { return a.(LockState) == b.(LockState) },
		Hash:              hashLock,
		DescribeOperation: describeLockOp,
		DescribeState:     describeLockState,
	}
}

func stepLock(state, input, output any) (bool, any) {
	s := state.(LockState)
	in := input.(LockInput)
	out := output.(LockOutput)
	switch in.Op {
	case Acquire:
		// A failed or unknown acquire changes nothing: the client does
		// not enter its critical section, so it believes no hold.
		if out.Outcome != OK {
			return true, s
		}
		if s.Holder != -1 && s.Holder != in.Client {
			return false, s
		}
		return true, LockState{Holder: in.Client, Count: s.Count + 1}
	case Release:
		// Whatever the reply, the client stops relying on this hold.
		// A release by anyone else is legal (the lock reports it) but
		// must not free the holder, or a foreign unlock would hide
		// the overlap it causes.
		if s.Holder != in.Client {
			return true, s
		}
		if s.Count == 1 {
			return true, LockState{Holder: -1}
		}
		return true, LockState{Holder: s.Holder, Count: s.Count - 1}
	case Crash:
		if s.Holder == in.Client {
			return true, LockState{Holder: -1}
		}
		return true, s
	}
	panic(fmt.Sprintf("models: unknown lock op %q", in.Op))
}

// partitionByKey splits a lock history by key. A crash ends the client's
// holds on every key, so it goes into every partition.
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	index := make(map[string]int)
	for _, op := range history {
		in := op.Input.(LockInput)
		if _, seen := index[in.Key]; !seen && in.Op != Crash {
			index[in.Key] = len(index)
		}
	}
	if len(index) == 0 {
		return [][]porcupine.Operation{history}
	}
	parts := make([][]porcupine.Operation, len(index))
	for _, op := range history {
		in := op.Input.(LockInput)
		if in.Op == Crash {
			for i := range parts {
				parts[i] = append(parts[i], op)
			}
			continue
		}
		i := index[in.Key]
		parts[i] = append(parts[i], op)
	}
	return parts
}

func hashLock(state any) uint64 {
	s := state.(LockState)
	return uint64(s.Holder+1)*0x9e3779b97f4a7c15 ^ uint64(s.Count)
}

func describeLockOp(input, output any) string {
	in := input.(LockInput)
	if in.Op == Crash {
		return fmt.Sprintf("c%d crash", in.Client)
	}
	return fmt.Sprintf("c%d %s(%s) → %s", in.Client, in.Op, in.Key, output.(LockOutput).Outcome)
}

func describeLockState(state any) string {
	s := state.(LockState)
	if s.Holder == -1 {
		return "free"
	}
	return fmt.Sprintf("held by c%d ×%d", s.Holder, s.Count)
}
