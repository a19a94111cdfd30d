package workshop

import (
	"fmt"
	"html/template"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/checker"
)

// Papers are the page sizes the handout is written for: one file each,
// since a page's size is set by its stylesheet.
var Papers = []struct{ Name, Size, File string }{
	{"A4", "A4", "handout-a4.html"},
	{"Letter", "letter", "handout-letter.html"},
}

// summaryRow is one pitfall in the handout's summary table.
type summaryRow struct {
	ID, Family, Name, Title, Caught, Fix string
}

var handoutBody = template.Must(template.New("handout").Parse(`
<section class="sheet summary"><h2>Every pitfall and its fix</h2>
<table><tr><th>ID</th><th>family</th><th>pitfall</th><th>caught by</th><th>the fix</th></tr>
{{range .Rows}}<tr><td>{{.ID}}</td><td>{{.Family}}</td><td><b>{{.Name}}</b>: {{.Title}}</td><td>{{.Caught}}</td><td>{{.Fix}}</td></tr>
{{end}}</table></section>
{{range .Cards}}<section class="sheet"><h2>{{.Pitfall.ID}} {{.Pitfall.Name}}: {{.Pitfall.Title}}</h2>
<p><b>What goes wrong.</b> {{.Pitfall.Wrong}}</p>
<p><b>The fix.</b> {{.Pitfall.Fix}}</p>
{{if .Sequence}}<figure>{{.Sequence}}</figure>{{end}}
{{if .Timeline}}<figure>{{.Timeline}}</figure>{{else}}<p><i>No drawing: {{.Why}}.</i></p>{{end}}
</section>
{{end}}
`))

// handoutStyle fits each sheet on one page of paper size: the figures
// share what the text leaves of the page's height.
const handoutStyle = `<style>
@page{size:%s;margin:10mm}
@media print{
 h1{display:none}
 .sheet{break-after:page;break-inside:avoid}
 .sheet h2{margin:0 0 2mm}
 .sheet p{margin:0 0 2mm;font-size:9pt}
 figure svg{max-height:95mm}
 .summary table{font-size:6.5pt;line-height:1.05}
 .summary td,.summary th{padding:0.3mm 1mm}
}
</style>`

// writeHandout writes the handout for each paper size: the summary table
// on the first page, then one page per pitfall.
func writeHandout(class string, cards []card) error {
	var rows []summaryRow
	for _, c := range cards {
		p := c.Pitfall
		var caught []string
		for _, name := range checker.Checkers {
			if v, ok := p.Catches[name]; ok {
				caught = append(caught, name+" "+string(v))
			}
		}
		rows = append(rows, summaryRow{ID: p.ID, Family: string(p.Family), Name: p.Name, Title: p.Title,
			Caught: strings.Join(caught, ", ") + " (" + string(p.Kind) + ")", Fix: firstSentence(p.Fix)})
	}
	for _, paper := range Papers {
		body, err := render(handoutBody, struct {
			Rows  []summaryRow
			Cards []card
		}{rows, cards})
		if err != nil {
			return err
		}
		body = template.HTML(fmt.Sprintf(handoutStyle, paper.Size)) + body
		title := fmt.Sprintf("Distributed locks: the handout (%s)", paper.Name)
		if err := writePage(filepath.Join(class, paper.File), title, []link{{"workshop", "index.html"}}, body); err != nil {
			return err
		}
	}
	return nil
}

// firstSentence is s up to its first full stop followed by a space.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
