// Package reports renders what locklab found: the text table and JSON the CLI
// prints, and the HTML report folder a workshop hands out.
package reports

import (
	"encoding/json"
	"fmt"
	"github.com/locklab/locklab/history"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/runner"
)

// Run is one run of a lock through one scenario: either a catalogue case
// (one variant of one pitfall, with the verdicts the catalogue expects) or a
// lock run (a named lock through one scenario of its matrix, with nothing
// expected). Its JSON form is what `check -json` prints and what SaveRun
// writes into the run's folder as run.json.
//
// Kinds holds, per checker whose verdict is failing (illegal, stuck, slow),
// whether a correct lock of the same kind fails too: "own" (the lock's bug)
// or "inherent" (the fault beats any such lock); KindWhy says why, per
// checker. A failing verdict whose kind could not be told (untold) is in
// neither.
type Run struct {
	// Pitfall and Variant name a catalogue case; Lock names a lock run.
	// Exactly one of the two is set.
	Pitfall    string                     `json:"pitfall,omitempty"`
	Variant    pitfalls.Variant           `json:"variant,omitempty"`
	Lock       string                     `json:"lock,omitempty"`
	Scenario   string                     `json:"scenario"`
	Seed       int64                      `json:"seed"`
	Verdicts   map[string]checker.Verdict `json:"verdicts"`
	Kinds      map[string]checker.Kind    `json:"kinds,omitempty"`
	KindWhy    map[string]string          `json:"kind_why,omitempty"`
	Expected   map[string]checker.Verdict `json:"expected,omitempty"`
	Pass       bool                       `json:"pass"`
	DetectMS   *float64                   `json:"detect_ms"`
	DurationMS float64                    `json:"duration_ms"`
	ReportDir  string                     `json:"report_dir"`
	// Reference holds the verdicts of the reference lock's last run in the
	// same scenario and seed, and ReferenceRuns how many times it ran,
	// when the history alone could not tell a failing verdict's kind.
	Reference     map[string]checker.Verdict `json:"reference,omitempty"`
	ReferenceRuns int                        `json:"reference_runs,omitempty"`
	// Spoiled says what of the scenario did not happen; the verdicts
	// are then all unknown and the run does not pass. Runs saved before
	// the word was spoiled call it not_exercised (UnmarshalJSON).
	Spoiled []string `json:"spoiled,omitempty"`
	// Missed says why the fault the scenario is about never struck the lock
	// (a fix that refused every acquire): its verdicts stand, but a pass
	// is not a pass of that fault. Runs saved before the word was missed
	// call it unmet (UnmarshalJSON).
	Missed []string `json:"missed,omitempty"`
	// Skipped is why the run could not start (a missing redis-server or
	// MariaDB, with how to install it); it then has no verdicts and does
	// not pass.
	Skipped string `json:"skipped,omitempty"`
	// Alone is set on a run made again on its own after a run of the same
	// case, made in parallel with others, was unsettled (see Unsettled):
	// what that first run showed.
	Alone string `json:"alone,omitempty"`

	Entry     pitfalls.Pitfall `json:"-"` // the catalogue entry of a catalogue case
	LockEntry locks.Lock       `json:"-"` // the registry's entry of a lock run, when it has one
	Result    *runner.Result   `json:"-"` // everything the run found
}

// UnmarshalJSON reads a Run also under the names its fields had before the
// words spoiled and missed, as saved report folders hold them (run.json):
// not_exercised and unmet.
func (r *Run) UnmarshalJSON(b []byte) error {
	type fields Run // Run's fields, without this method
	var v struct {
		fields
		history.Renamed
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Run(v.fields)
	v.Renamed.Into(&r.Spoiled, &r.Missed)
	return nil
}

// NewRun compares the result of one case of p with what the catalogue expects.
func NewRun(p pitfalls.Pitfall, c pitfalls.Case, res *runner.Result) Run {
	r := fromResult(res)
	r.Pitfall, r.Variant, r.Expected, r.Entry = p.Name, c.Variant, c.Expected, p
	r.Pass = r.status() == asExpected
	return r
}

// LockRun is the run of the lock named lockName that res describes. With
// nothing expected of it, it passes when it took place as written, every
// checker could judge it (no unknown verdict), and every failing verdict is
// inherent to the fault; an own or untold one fails it.
func LockRun(lockName string, res *runner.Result) Run {
	r := fromResult(res)
	r.Lock = lockName
	r.LockEntry, _ = locks.Lookup(lockName) // an attendee's own lock has no entry
	r.Pass = r.status() == asExpected
	return r
}

// fromResult is what every kind of run takes from its result.
func fromResult(res *runner.Result) Run {
	r := Run{Scenario: res.Scenario, Seed: res.Seed, Verdicts: res.Verdicts,
		DurationMS: millis(res.Duration), ReportDir: res.Dir,
		Reference: res.Reference, ReferenceRuns: res.ReferenceRuns,
		Spoiled: res.Spoiled, Missed: res.Missed, Result: res}
	for _, c := range res.Checks {
		if !checker.Failing(c.Verdict) {
			continue
		}
		if c.Kind != "" {
			if r.Kinds == nil {
				r.Kinds = map[string]checker.Kind{}
			}
			r.Kinds[c.Checker] = c.Kind
		}
		// Why also when untold: it says why the kind could not be told.
		if c.KindWhy != "" {
			if r.KindWhy == nil {
				r.KindWhy = map[string]string{}
			}
			r.KindWhy[c.Checker] = c.KindWhy
		}
	}
	if res.Detect != nil {
		d := millis(*res.Detect)
		r.DetectMS = &d
	}
	return r
}

// SkippedRun is one case of p that could not start, for the reason why
// (which should say how to make it possible). It has no verdicts and does
// not pass.
func SkippedRun(p pitfalls.Pitfall, c pitfalls.Case, seed int64, dir, why string) Run {
	if why == "" {
		why = "could not start"
	}
	return Run{Pitfall: p.Name, Variant: c.Variant, Scenario: c.Scenario, Seed: seed,
		Expected: c.Expected, ReportDir: dir, Skipped: why, Entry: p}
}

// SkippedLockRun is the run of the lock named lockName through scenario
// that could not start, for the reason why. It has no verdicts and does not
// pass.
func SkippedLockRun(lockName, scenario string, seed int64, dir, why string) Run {
	if why == "" {
		why = "could not start"
	}
	r := Run{Lock: lockName, Scenario: scenario, Seed: seed, ReportDir: dir, Skipped: why}
	r.LockEntry, _ = locks.Lookup(lockName)
	return r
}

// Name is how the table's summary and the progress lines call the run:
// pitfall/variant for a catalogue case, lock/scenario for a lock run.
func (r Run) Name() string {
	if r.Lock != "" {
		return r.Lock + "/" + r.Scenario
	}
	return r.Pitfall + "/" + string(r.Variant)
}

// status is how a run turned out, for the table, the summary and the page.
type status int

const (
	asExpected    status = iota // a catalogue case as expected; a lock run with no failure of its own
	notAsExpected               // a catalogue case whose verdicts differ from the expected ones
	ownFailure                  // a lock run with a failing verdict that is not inherent
	undecided                   // a lock run with an unknown verdict, and no own failure
	spoiled
	skipped
)

func (r Run) status() status {
	switch {
	case r.Skipped != "":
		return skipped
	case len(r.Spoiled) > 0:
		return spoiled
	case r.Lock != "" && len(r.ownFailures()) > 0:
		return ownFailure
	case r.Lock != "" && len(r.unknowns()) > 0:
		return undecided
	case r.Lock == "" && len(checker.Mismatches(r.Expected, r.Verdicts)) > 0:
		return notAsExpected
	}
	return asExpected
}

// Unsettled reports whether r's outcome may owe to the load of the runs
// made beside it: spoiled, not as expected, or with unknown
// verdicts. A suite made in parallel makes such a run again alone.
func (r Run) Unsettled() bool {
	s := r.status()
	return s == spoiled || s == notAsExpected || s == undecided
}

// ownFailures lists, in checker order, the failing verdicts of r that are
// not inherent: "lock illegal", or "lock illegal (untold)" when the
// kind could not be told.
func (r Run) ownFailures() []string {
	var own []string
	for _, c := range checker.Checkers {
		v := r.Verdicts[c]
		if !checker.Failing(v) || r.Kinds[c] == checker.Inherent {
			continue
		}
		s := fmt.Sprintf("%s %s", c, v)
		if r.Kinds[c] == "" {
			s += " (untold)"
		}
		own = append(own, s)
	}
	return own
}

// unknowns lists, in checker order, the checkers whose verdict on r is
// unknown: the run took place, but they could not tell (a client stalled by
// the machine, not by the scenario).
func (r Run) unknowns() []string {
	var unknown []string
	for _, c := range checker.Checkers {
		if r.Verdicts[c] == checker.Unknown {
			unknown = append(unknown, c)
		}
	}
	return unknown
}

// verdictText is checker c's verdict with its kind, "illegal (own)", or
// "-" when the run has none.
func (r Run) verdictText(c string) string {
	got, ok := r.Verdicts[c]
	if !ok || got == "" {
		return "-"
	}
	if k := r.kindText(c); k != "" {
		return fmt.Sprintf("%s (%s)", got, k)
	}
	return string(got)
}

// kindText is the kind of checker c's verdict: own, inherent, "untold" when
// the harness tried to tell and said why it could not, or "" when no
// reference lock was run for it.
func (r Run) kindText(c string) string {
	if k := r.Kinds[c]; k != "" {
		return string(k)
	}
	if checker.Failing(r.Verdicts[c]) && r.KindWhy[c] != "" {
		return "untold"
	}
	return ""
}

// referenceText says how many times the reference lock ran and what its
// last run found, or "" when it did not run.
func (r Run) referenceText() string {
	if r.ReferenceRuns == 0 {
		return ""
	}
	var found []string
	for _, c := range checker.Checkers {
		if v, ok := r.Reference[c]; ok {
			found = append(found, fmt.Sprintf("%s %s", c, v))
		}
	}
	return fmt.Sprintf("The reference lock ran %s in the same scenario and seed, to tell the kinds the history alone could not; its last run: %s.",
		plural(r.ReferenceRuns, "time"), strings.Join(found, ", "))
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
