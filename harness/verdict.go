package harness

import "github.com/locklab/locklab/check"

// The verdicts and checker names of package check, here too so that a lock
// author's test needs only this package and scenarios.
type (
	// Verdict is one checker's judgement of one run.
	Verdict = check.Verdict
	// Check is one checker's verdict with its reason.
	Check = check.Check
)

// Verdicts.
const (
	OK      = check.OK
	Illegal = check.Illegal
	Stuck   = check.Stuck
	Slow    = check.Slow
	Unknown = check.Unknown
)

// Checker names.
const (
	CheckLock     = check.CheckLock
	CheckResource = check.CheckResource
	CheckLiveness = check.CheckLiveness
	CheckHandover = check.CheckHandover
)
