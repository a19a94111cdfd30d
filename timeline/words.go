package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
)

// Schedule is every fault and crash of the run in plain words, in order,
// each with its time from the start of the run as the history recorded it:
// "1.23 s: client 0 paused for 500 ms (before DEL (release command 1))".
func Schedule(ops []history.Op) []string {
	last := history.Last(ops)
	var end time.Duration
	for _, op := range ops {
		if op.Kind == history.KindEnd {
			end = op.Call
		}
	}
	var faults []history.Op
	for _, op := range ops {
		if op.Kind == history.KindFault || op.Kind == history.KindCrash {
			faults = append(faults, op)
		}
	}
	// A failover is told when Sentinel promoted the replica, which ends
	// it; every other fault when it began.
	when := func(f history.Op) time.Duration {
		if f.Kind == history.KindFault && f.Part == history.PartFailover {
			return history.Returned(f, last)
		}
		return f.Call
	}
	slices.SortStableFunc(faults, func(a, b history.Op) int { return cmp.Compare(when(a), when(b)) })
	var lines []string
	for _, f := range faults {
		at := fmt.Sprintf("%.2f s: ", when(f).Seconds())
		if f.Kind == history.KindCrash {
			lines = append(lines, at+fmt.Sprintf("client %d crashed%s", f.Client, trigger(f)))
			continue
		}
		ret := history.Returned(f, last)
		length := "for " + msText(ret-f.Call)
		if end > 0 && ret >= end {
			length = "until the end of the run"
		}
		var what string
		own := f.Part == "" && f.Client >= 0
		switch {
		case own && f.FaultKind == "pause":
			what = fmt.Sprintf("client %d paused %s", f.Client, length)
		case own && f.FaultKind == "slow-work":
			what = fmt.Sprintf("client %d's work made slow, %s", f.Client, strings.TrimPrefix(length, "for "))
		case f.Part == history.PartFailover:
			// The detail says whom Sentinel promoted, for people; it is
			// shown, not read.
			what = "Sentinel failover"
			if f.Detail != "" {
				what = f.Detail
			}
			what += fmt.Sprintf(" (the master was killed at %.2f s)", f.Call.Seconds())
		case ret-f.Call < 5*time.Millisecond: // an instant: its length is noise
			what = f.Fault
		default:
			what = fmt.Sprintf("%s, %s", f.Fault, length)
		}
		lines = append(lines, at+what+trigger(f))
	}
	return lines
}

// trigger is the failpoint that set a fault or crash off: " (before
// release command 1: DEL)" at a command, " (critical-section)", " (at
// failpoint critical-section)" for a fault of the system, or "" when it
// was scheduled.
func trigger(f history.Op) string {
	if f.Failpoint == "" {
		return ""
	}
	at := f.Failpoint
	if f.Command != "" {
		// A command's failpoint reads with the command it struck.
		at = fmt.Sprintf("%s: %s", f.Failpoint, f.Command)
	}
	if f.Client < 0 {
		// A fault of the system: its row does not say whose failpoint.
		return " (at failpoint " + at + ")"
	}
	return " (" + at + ")"
}

// Lesson is the line that reads a fix as the lesson it is, when the lock
// failed but the resource protected itself: "lock illegal, resource ok: the
// resource refused token 33 after 34". It is "" otherwise.
func Lesson(ops []history.Op, checks []checker.Check) string {
	s := newScene(ops, checks)
	if !s.lesson() || s.checks[checker.CheckLock].Verdict != checker.Illegal {
		return ""
	}
	return fmt.Sprintf("lock illegal, resource ok: the resource refused token %d after %d", s.refusal.section.Token, s.refusal.newer)
}
