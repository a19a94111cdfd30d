// Package workshop writes a workshop in a folder from the runs a report
// folder holds: a page per pitfall to predict, histories to judge, starter
// locks to fix and the handout to print for the class, and the answers,
// solutions and demo order for the teacher. Every page is plain HTML with
// inline SVG and no JavaScript, so the folder works offline once zipped.
package workshop

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reports"
)

// Folders the workshop writes under Options.Out: the class's material,
// which the teacher zips and hands out, and the teacher's own.
const (
	ClassDir   = "class"
	TeacherDir = "teacher"
)

// Options say where a workshop's runs come from and where it goes.
type Options struct {
	// From is a report folder that `check` wrote (every pitfall's broken
	// and fixed run): the workshop draws its timelines and cuts its
	// histories from these runs, and runs nothing itself.
	From string
	// Out is the folder the workshop is written into; made when missing.
	Out string
	// Source is the locklab source tree the Go exercises build against
	// (their go.mod replaces the module with it); "" leaves the Go
	// exercises out.
	Source string
}

// Workshop is what Write wrote, for the command's summary and the tests.
type Workshop struct {
	Predict []string // the predict pages, relative to the class folder
	Missing []string // pitfalls whose broken run -from does not hold
	Quiz    []Question
}

// Write writes the workshop of the runs in opts.From into opts.Out.
func Write(opts Options) (Workshop, error) {
	runs, err := reports.LoadRuns(opts.From)
	if err != nil && len(runs) == 0 {
		return Workshop{}, fmt.Errorf("workshop: %w", err)
	}
	if len(runs) == 0 {
		return Workshop{}, fmt.Errorf("workshop: %s holds no runs (run `check -out %s` first)", opts.From, opts.From)
	}
	class, teacher := filepath.Join(opts.Out, ClassDir), filepath.Join(opts.Out, TeacherDir)
	for _, d := range []string{class, teacher} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Workshop{}, fmt.Errorf("workshop: %w", err)
		}
	}
	var w Workshop
	cards, err := writePredict(class, pitfalls.Catalogue(), runs)
	if err != nil {
		return w, err
	}
	for _, c := range cards {
		w.Predict = append(w.Predict, c.Page)
		if c.Run == nil {
			w.Missing = append(w.Missing, c.Pitfall.Name)
		}
	}
	if w.Quiz, err = writeQuiz(class, runs); err != nil {
		return w, err
	}
	if err := writeFix(class, teacher, opts.Source); err != nil {
		return w, err
	}
	if err := writeHandout(class, cards); err != nil {
		return w, err
	}
	if err := writeTeacher(teacher, cards, w.Quiz); err != nil {
		return w, err
	}
	return w, writeClassIndex(class, len(w.Quiz))
}

// errNoRun is why a card has no drawing: -from holds no broken run of it.
var errNoRun = errors.New("no saved run")

// style is every page's stylesheet: readable on a screen, and on paper one
// pitfall per page with the figures scaled to the printable width.
const style = `
body{font-family:system-ui,sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;line-height:1.4;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.4em}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:12px;line-height:1.3}
svg{max-width:100%;height:auto}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
details{border:1px solid #ccc;padding:.4em .8em;margin:1em 0}summary{cursor:pointer;font-weight:bold}
.question{font-size:1.15em;font-weight:bold;border-left:4px solid #c60;padding-left:.6em}
.illegal,.stuck,.slow{color:#b00020;font-weight:bold}.ok{color:#1b5e20}
nav a{margin-right:1em}
.sheet{break-after:page}
@media print{
 @page{margin:12mm}
 body{max-width:none;margin:0;padding:0;font-size:10pt}
 nav{display:none}
 pre{font-size:8pt;white-space:pre-wrap;overflow:visible}
 figure{break-inside:avoid;margin:0}
 figure svg{width:100%;height:auto;max-height:110mm}
 .sheet:last-child{break-after:auto}
}
`

// page is the frame of every page the workshop writes.
var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title><style>{{.Style}}</style></head>
<body>{{if .Nav}}<nav>{{range .Nav}}<a href="{{.Href}}">{{.Name}}</a>{{end}}</nav>{{end}}
<h1>{{.Title}}</h1>
{{.Body}}
</body></html>
`))

// link is one link of a page.
type link struct{ Name, Href string }

// writePage writes one page: its title, its links and its body.
func writePage(path, title string, nav []link, body template.HTML) error {
	var b bytes.Buffer
	err := page.Execute(&b, struct {
		Title string
		Style template.CSS
		Nav   []link
		Body  template.HTML
	}{title, template.CSS(style), nav, body})
	if err != nil {
		return fmt.Errorf("workshop: %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("workshop: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("workshop: %w", err)
	}
	return nil
}

// render executes a body template into HTML.
func render(t *template.Template, data any) (template.HTML, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("workshop: %s: %w", t.Name(), err)
	}
	return template.HTML(b.String()), nil
}

var indexBody = template.Must(template.New("index").Parse(`
<p>Three exercises on distributed locks, each from real runs of locklab: servers, faults and checkers as they happened.</p>
<ol>
<li><a href="predict/index.html">Predict</a>: for each pitfall, read the lock's code and the scenario, look at the timeline up to the fault, and say which checker fails and when.</li>
<li><a href="quiz.html">Judge the history</a>: {{.Quiz}} short histories; legal or illegal, and if illegal which two holds overlap.</li>
<li><a href="fix/index.html">Fix it</a>: starter locks in Go, Python and PHP, each broken in one way, and the grader that says which scenario still fails.</li>
</ol>
<p>To print: the handout on <a href="handout-a4.html">A4</a> or <a href="handout-letter.html">Letter</a>, a summary table and one page per pitfall.</p>
`))

// writeClassIndex writes the class folder's first page.
func writeClassIndex(class string, questions int) error {
	body, err := render(indexBody, struct{ Quiz int }{questions})
	if err != nil {
		return err
	}
	return writePage(filepath.Join(class, "index.html"), "Distributed locks: a workshop", nil, body)
}
