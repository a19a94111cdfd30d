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
// JSON form is what `check -json` prints.
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

	Entry  pitfalls.Pitfall `json:"-"` // the catalogue entry
	Result *harness.Result  `json:"-"` // everything the run found
}

// NewRun compares the result of one case of p with what the catalogue expects.
func NewRun(p pitfalls.Pitfall, c pitfalls.Case, res *harness.Result) Run {
	r := Run{
		Pitfall: p.Name, Variant: c.Variant, Scenario: res.Scenario, Seed: res.Seed,
		Verdicts: res.Verdicts, Expected: c.Expected,
		DurationMS: millis(res.Duration), ReportDir: res.Dir,
		Entry: p, Result: res,
	}
	r.Pass = len(check.Mismatches(r.Expected, r.Verdicts)) == 0
	if res.Detect != nil {
		d := millis(*res.Detect)
		r.DetectMS = &d
	}
	return r
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
