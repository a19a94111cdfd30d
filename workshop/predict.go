package workshop

import (
	"fmt"
	"html/template"
	"path/filepath"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/timeline"
)

// card is one pitfall as the workshop shows it: the question on the
// predict page, the answer under it, and the handout's page.
type card struct {
	Pitfall  pitfalls.Pitfall
	Page     string       // the predict page, relative to the class folder
	Run      *reports.Run // the broken run; nil when -from has none
	Fixed    []reports.Run
	Code     excerpt
	FixCode  *excerpt // the fix's lock, when it is another lock
	Scenario string   // what the scenario does, in plain words
	Cut      time.Duration
	Before   template.HTML // the timeline up to the fault, no verdicts
	Sequence template.HTML // the counterexample
	Timeline template.HTML // the whole run, verdicts marked
	Checks   []checker.Check
	// Cause is the counterexample's step that let the second holder in,
	// in words with its time, or "" when the story names none.
	Cause string
	Why   string // why there is no drawing
}

// newCard gathers what the pages of p show from runs.
func newCard(p pitfalls.Pitfall, runs []reports.Run) card {
	c := card{Pitfall: p, Page: fmt.Sprintf("predict/%s-%s.html", p.ID, p.Name)}
	var err error
	if c.Code, err = lockExcerpt(p.Broken); err != nil {
		c.Code = excerpt{Code: "// " + err.Error()}
	}
	if len(p.Fixes) > 0 {
		if ex, err := lockExcerpt(p.Fixes[0].Lock); err == nil && ex != c.Code {
			c.FixCode = &ex
		}
	}
	if s, err := scenarios.Lookup(p.Scenario); err == nil {
		c.Scenario = s.Description
	}
	for i := range runs {
		r := runs[i]
		switch {
		case r.Pitfall != p.Name:
		case r.Variant == pitfalls.Broken && r.Scenario == p.Scenario:
			c.Run = &r
		case r.Variant == pitfalls.Fixed:
			c.Fixed = append(c.Fixed, r)
		}
	}
	c.draw()
	return c
}

// draw reads the broken run's history and draws it twice: up to the fault
// without verdicts for the question, and whole with them for the answer.
func (c *card) draw() {
	if c.Run == nil || c.Run.Result == nil {
		c.Why = fmt.Sprintf("%v of %s broken in %s: run `check -pitfall %s` into the -from folder", errNoRun, c.Pitfall.Name, c.Pitfall.Scenario, c.Pitfall.Name)
		return
	}
	ops, err := history.ReadFile(filepath.Join(c.Run.ReportDir, runner.HistoryFile))
	if err != nil {
		c.Why = err.Error()
		return
	}
	c.Checks = c.Run.Result.Checks
	var before []history.Op
	before, c.Cut = cutAtFault(ops, c.Run.Result.Detect)
	c.Before = template.HTML(timeline.Draw(before, nil))
	c.Timeline = template.HTML(timeline.Draw(ops, c.Checks))
	if seq, ok := timeline.Sequence(ops, c.Checks); ok {
		c.Sequence = template.HTML(seq)
	}
	if e, ok := timeline.CauseOf(timeline.Story(ops, c.Checks)); ok {
		c.Cause = fmt.Sprintf("At %d ms, %s.", e.At.Round(time.Millisecond).Milliseconds(), e.Text)
	}
}

// cutAtFault is the history as it stood a moment after the scenario's
// crux struck (its fault or crash), before the violation detect says the
// checkers saw; without a crux, up to that violation. What had not
// returned by then is drawn as still going, or left out when it has no
// call-only form (an acquire's hold starts at its reply).
func cutAtFault(ops []history.Op, detect *time.Duration) ([]history.Op, time.Duration) {
	cut := history.Last(ops)
	if detect != nil {
		cut = *detect
	}
	crux := time.Duration(-1)
	for _, op := range ops {
		if op.Crux && (op.Kind == history.KindFault || op.Kind == history.KindCrash) && (crux < 0 || op.Call < crux) {
			crux = op.Call
		}
	}
	if crux >= 0 && crux < cut {
		cut = crux + min(50*time.Millisecond, (cut-crux)/2)
	}
	var out []history.Op
	for _, op := range ops {
		if op.Call > cut || op.Kind == history.KindEnd {
			continue
		}
		if op.Return == history.NeverReturned || op.Return > cut {
			switch op.Kind {
			case history.KindRelease, history.KindFault, history.KindCrash:
				// Its detail was written at its end (a failover's
				// promotion), which the question must not tell.
				op.Return, op.Detail = history.NeverReturned, ""
			default:
				continue
			}
		}
		out = append(out, op)
	}
	return out, cut
}

var predictBody = template.Must(template.New("predict").Funcs(funcs).Parse(`
<p><b>{{.Pitfall.Title}}</b> ({{.Pitfall.Family}} family; seed articles: {{.Pitfall.Article}})</p>
<h2>The lock</h2>
<p>From <code>{{.Code.File}}</code>:</p>
<pre>{{.Code.Code}}</pre>
<h2>The scenario</h2>
<p>{{.Scenario}}</p>
{{if .Before}}<figure>{{.Before}}<figcaption>The run up to {{ms .Cut}}, a moment after the scenario's fault (or up to where the trouble starts): holds as bars, refused acquires as ticks, faults hatched. No verdicts.</figcaption></figure>
{{else}}<p><i>No drawing: {{.Why}}.</i></p>{{end}}
<p class="question">Which checker fails (lock, resource, liveness or handover), and at what moment?</p>
<details><summary>Answer</summary>
{{if .Checks}}<table><tr><th>checker</th><th>verdict</th><th>kind</th><th>when</th><th>why</th></tr>
{{range .Checks}}<tr><td>{{.Checker}}</td><td class="{{.Verdict}}">{{.Verdict}}</td><td>{{.Kind}}</td><td>{{if .At}}{{ms .At}}{{end}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>{{end}}
<p><b>What goes wrong.</b> {{.Pitfall.Wrong}}</p>
{{with .Cause}}<p class="cause"><b>What let the second holder in, in this run.</b> {{.}}</p>{{end}}
{{if .Sequence}}<h3>The counterexample</h3><figure>{{.Sequence}}</figure>{{end}}
{{if .Timeline}}<h3>The whole run, with the violation marked</h3><figure>{{.Timeline}}</figure>{{end}}
<p><b>The fix.</b> {{.Pitfall.Fix}}</p>
{{with .FixCode}}<p>From <code>{{.File}}</code>:</p><pre>{{.Code}}</pre>{{end}}
{{range .Fixed}}<p>The fix in {{.Scenario}}: {{verdicts .Verdicts}}.</p>{{end}}
</details>
`))

var predictIndex = template.Must(template.New("predict-index").Funcs(funcs).Parse(`
<p>One page per pitfall. Read the code and the scenario, look at the run up to its fault, then answer: which checker fails, and at what moment? The answer is folded under each question.</p>
<table><tr><th>ID</th><th>family</th><th>pitfall</th><th>title</th></tr>
{{range .}}<tr><td>{{.Pitfall.ID}}</td><td>{{.Pitfall.Family}}</td><td><a href="{{base .Page}}">{{.Pitfall.Name}}</a></td><td>{{.Pitfall.Title}}</td></tr>
{{end}}</table>
`))

// funcs are the helpers of the body templates.
var funcs = template.FuncMap{
	"ms": func(d any) string {
		switch d := d.(type) {
		case time.Duration:
			return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
		case *time.Duration:
			return fmt.Sprintf("%.0f ms", float64(*d)/float64(time.Millisecond))
		}
		return ""
	},
	"verdicts": verdictsText,
	"base":     filepath.Base,
	"inc":      func(i int) int { return i + 1 },
	"failing":  failingText,
	"detect": func(ms *float64) string {
		if ms == nil {
			return ""
		}
		return fmt.Sprintf("%.0f ms", *ms)
	},
	"secs": func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) },
}

// failingText is a run's failing verdicts in checker order, on one line.
func failingText(v map[string]checker.Verdict) string {
	failing := map[string]checker.Verdict{}
	for c, got := range v {
		if checker.Failing(got) || got == checker.Unknown {
			failing[c] = got
		}
	}
	if len(failing) == 0 {
		return "none"
	}
	return verdictsText(failing)
}

// verdictsText is a run's verdicts in checker order, on one line.
func verdictsText(v map[string]checker.Verdict) string {
	s := ""
	for _, c := range checker.Checkers {
		if got, ok := v[c]; ok {
			if s != "" {
				s += ", "
			}
			s += c + " " + string(got)
		}
	}
	return s
}

// writePredict writes a predict page per pitfall of ps, and their index.
func writePredict(class string, ps []pitfalls.Pitfall, runs []reports.Run) ([]card, error) {
	var cards []card
	nav := []link{{"workshop", "../index.html"}, {"all pitfalls", "index.html"}}
	for _, p := range ps {
		c := newCard(p, runs)
		body, err := render(predictBody, c)
		if err != nil {
			return nil, err
		}
		if err := writePage(filepath.Join(class, c.Page), fmt.Sprintf("Predict: %s %s", p.ID, p.Name), nav, body); err != nil {
			return nil, err
		}
		cards = append(cards, c)
	}
	body, err := render(predictIndex, cards)
	if err != nil {
		return nil, err
	}
	return cards, writePage(filepath.Join(class, "predict", "index.html"), "Predict", nav[:1], body)
}
