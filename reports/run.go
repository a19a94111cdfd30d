// Package reports renders what locklab found: the text table and JSON the CLI
// prints, and the HTML report folder a workshop hands out.
package reports

import (
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/pitfalls"
)

// Run is one catalogue run: one variant of one pitfall in its scenario. Its
// JSON form is what `check -json` prints and what SaveRun writes into the
// run's folder as run.json.
type Run struct {
	Pitfall    string                     `json:"pitfall"`
	Variant    pitfalls.Variant           `json:"variant"`
	Scenario   string                     `json:"scenario"`
	Seed       int64                      `json:"seed"`
	Verdicts   map[string]harness.Verdict `json:"verdicts"`
	Expected   map[string]harness.Verdict `json:"expected"`
	Pass       bool                       `json:"pass"`
	DetectMS   *float64                   `json:"detect_ms"`
	DurationMS float64                    `json:"duration_ms"`
	ReportDir  string                     `json:"report_dir"`
	// NotExercised says what of the scenario did not happen; the verdicts
	// are then all unknown and the run does not pass.
	NotExercised []string `json:"not_exercised,omitempty"`
	// Skipped is why the run could not start (a missing redis-server or
	// MariaDB, with how to install it); it then has no verdicts and does
	// not pass.
	Skipped string `json:"skipped,omitempty"`

	Entry  pitfalls.Pitfall `json:"-"` // the catalogue entry
	Result *harness.Result  `json:"-"` // everything the run found
}

// NewRun compares the result of one case of p with what the catalogue expects.
func NewRun(p pitfalls.Pitfall, c pitfalls.Case, res *harness.Result) Run {
	r := Run{
		Pitfall: p.Name, Variant: c.Variant, Scenario: res.Scenario, Seed: res.Seed,
		Verdicts: res.Verdicts, Expected: c.Expected,
		DurationMS: millis(res.Duration), ReportDir: res.Dir,
		NotExercised: res.NotExercised,
		Entry:        p, Result: res,
	}
	r.Pass = len(r.NotExercised) == 0 && len(check.Mismatches(r.Expected, r.Verdicts)) == 0
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

// status is how a run turned out, for the table, the summary and the page.
type status int

const (
	asExpected status = iota
	notAsExpected
	notExercised
	skipped
)

func (r Run) status() status {
	switch {
	case r.Skipped != "":
		return skipped
	case len(r.NotExercised) > 0:
		return notExercised
	case len(check.Mismatches(r.Expected, r.Verdicts)) > 0:
		return notAsExpected
	}
	return asExpected
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
