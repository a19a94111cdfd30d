package workshop

import (
	"bytes"
	"fmt"
	"html/template"
	"path/filepath"
	"slices"
	"time"

	"github.com/locklab/locklab/pitfalls"
)

// demos are the live demos in the order to show them: each one a step up
// the ladder, from no shared lock to the limits of every lock service.
var demos = []struct{ Pitfall, Why string }{
	{"in-process", "why a shared lock at all: each process's mutex excludes nobody else"},
	{"del-release", "whose lock is it? A late DEL frees the next holder's lock"},
	{"no-renewal", "a lease is time: work that outlives it loses the lock"},
	{"non-reentrant", "the watchdog keeps a lock alive even when its owner waits for itself"},
	{"fenced", "no lease survives a stop-the-world pause; the resource must refuse stale tokens"},
	{"failover", "asynchronous replication loses a granted lock; WAIT only refuses service"},
	{"redlock-pause", "Redlock's majority does not help a paused holder either"},
	{"row-cleanup", "a database row lock has the same lease problem as Redis"},
	{"advisory-session", "a session lock dies with its session"},
	{"etcd-pause", "even consensus cannot stop a paused holder: fencing again"},
}

// demo is one live demo as the teacher's page shows it.
type demo struct {
	ID, Name, Why, Command string
	Runs                   []string // each run of the report: variant, scenario, time
	Total                  time.Duration
}

// exerciseLessons say what each exercise teaches.
var exerciseLessons = []struct{ Name, Lesson string }{
	{"Predict", "to read a lock as a sequence of commands that a fault can split anywhere, and to name the property that breaks (mutual exclusion, the data, progress, throughput) before seeing it break."},
	{"Judge the history", "what the lock checker checks: holds from reply to release call, and that two clients believing they hold the lock at once is the violation, whatever the server thought."},
	{"Fix it: del-release", "a release must check ownership and delete atomically (a Lua compare-and-delete)."},
	{"Fix it: no-renewal", "a lease must outlive the work: renew it from a watchdog, and stop renewing once it is lost."},
	{"Fix it: non-reentrant", "who the owner is: one client taking its own lock again must count holds, not wait for itself."},
	{"Fix it: failover", "what replication promises: WAIT refuses a lock no replica has, so safety is bought with availability; it does not close every window (failover-wait)."},
}

var teacherBody = template.Must(template.New("teacher").Funcs(funcs).Parse(`
<p>The class's folder is <code>../class</code>: zip it and hand it out. This folder, with the answers and the solutions, stays with you.</p>
<h2>Before the class</h2>
<ol><li><code>make deps</code>, then <code>go build -o check ./cmd/check</code>.</li>
<li><code>./check -out locklab-report</code>: every pitfall's runs, which the workshop is cut from.</li>
<li><code>./check workshop -from locklab-report -out locklab-workshop</code>.</li>
<li>Try one grade: <code>cd class/fix/go/del-release &amp;&amp; go test</code> must fail naming pause-before-del; with <code>solutions/go/del-release/lock.go</code> copied over it must pass.</li></ol>
<h2>Live demos, in this order</h2>
<p>Each is a subset of <code>make check</code>. Times are the runs' own, from the report this workshop was written from (made one after the other with <code>-parallel 1</code>, add them; with the default parallelism they overlap). Open the report's page of the broken run after each.</p>
<p>On the projector, add <code>-watch</code> (<code>./check -pitfall del-release -watch</code>): each run is drawn in the terminal as it goes, a lane per client (its holds, the faults that stop it), the faults' lane, and a lane that marks the overlap of two holds the moment it appears, with a line for each fault and overlap; then the same table. The runs are then made one after the other, so a demo takes the sum of its runs' times; the verdicts and the runs' times are those without <code>-watch</code>.</p>
<table><tr><th>#</th><th>command</th><th>shows</th><th>runs</th><th>time</th></tr>
{{range $i, $d := .Demos}}<tr><td>{{inc $i}}</td><td><code>{{$d.Command}}</code></td><td>{{$d.Why}}</td><td>{{range $d.Runs}}{{.}}<br>{{end}}</td><td>{{if $d.Total}}{{secs $d.Total}}{{end}}</td></tr>
{{end}}</table>
<h2>What each exercise teaches</h2>
<ul>{{range .Lessons}}<li><b>{{.Name}}</b>: {{.Lesson}}</li>{{end}}</ul>
<h2>Answers: predict</h2>
<table><tr><th>pitfall</th><th>fails</th><th>at</th><th>kind</th></tr>
{{range .Cards}}<tr><td><a href="../class/{{.Page}}">{{.Pitfall.ID}} {{.Pitfall.Name}}</a></td><td>{{if .Run}}{{failing .Run.Verdicts}}{{else}}(no run){{end}}</td><td>{{with .Run}}{{detect .DetectMS}}{{end}}</td><td>{{.Pitfall.Kind}}</td></tr>
{{end}}</table>
<h2>Answers: judge the history</h2>
<p>Computed by locklab's lock checker on each history exactly as the class sees it (also in <a href="quiz-key.txt">quiz-key.txt</a>).</p>
<ol>{{range .Quiz}}<li>{{.Answer}} <small>(cut from {{.From}})</small></li>{{end}}</ol>
<h2>Answers: fix it</h2>
<p>The reference solutions are in <a href="solutions/">solutions/</a>: Go (each a module, graded by <code>go test</code>), Python and PHP (graded by <code>check -lock exec:… -grade PITFALL</code>). Each starter fails its grade and each solution passes it; locklab's docs/workshop.md gives the counts measured.</p>
`))

// writeTeacher writes the teacher's page and the quiz's key.
func writeTeacher(teacher string, cards []card, qs []Question) error {
	var ds []demo
	for _, d := range demos {
		i := slices.IndexFunc(cards, func(c card) bool { return c.Pitfall.Name == d.Pitfall })
		if i < 0 {
			continue
		}
		c := cards[i]
		dm := demo{ID: c.Pitfall.ID, Name: d.Pitfall, Why: d.Why, Command: "go run ./cmd/check -pitfall " + d.Pitfall}
		if c.Run != nil {
			for _, r := range append([]runOf{{c.Run.Variant, c.Run.Scenario, c.Run.DurationMS}}, fixedRuns(c)...) {
				dm.Runs = append(dm.Runs, fmt.Sprintf("%s in %s: %.1f s", r.variant, r.scenario, r.ms/1000))
				dm.Total += time.Duration(r.ms * float64(time.Millisecond))
			}
		}
		ds = append(ds, dm)
	}
	body, err := render(teacherBody, struct {
		Demos   []demo
		Lessons any
		Cards   []card
		Quiz    []Question
	}{ds, exerciseLessons, cards, qs})
	if err != nil {
		return err
	}
	var key bytes.Buffer
	if err := WriteQuizText(&key, qs, true); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(teacher, "quiz-key.txt"), key.Bytes()); err != nil {
		return err
	}
	return writePage(filepath.Join(teacher, "index.html"), "The workshop: the teacher's page", nil, body)
}

// runOf is one run's variant, scenario and time.
type runOf struct {
	variant  pitfalls.Variant
	scenario string
	ms       float64
}

func fixedRuns(c card) []runOf {
	var out []runOf
	for _, r := range c.Fixed {
		out = append(out, runOf{r.Variant, r.Scenario, r.DurationMS})
	}
	return out
}
