package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/reports"
)

// pageCell is a cell as compare.html shows it: its colour and its links.
type pageCell struct {
	verdict string
	links   []string
	text    string
}

// readPage reads every cell of the grid in page, by lock and class, and
// the notes by their anchor.
func readPage(t *testing.T, page string) (map[[2]string]pageCell, map[string]string) {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	cells, notes := map[[2]string]pageCell{}, map[string]string{}
	attr := func(n *html.Node, key string) string {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val
			}
		}
		return ""
	}
	var text func(n *html.Node) string
	text = func(n *html.Node) string {
		if n.Type == html.TextNode {
			return n.Data
		}
		var s string
		for c := range n.ChildNodes() {
			s += text(c)
		}
		return s
	}
	for n := range doc.Descendants() {
		switch {
		case n.Type == html.ElementNode && n.Data == "td" && attr(n, "data-lock") != "":
			c := pageCell{verdict: attr(n, "data-verdict"), text: strings.TrimSpace(text(n))}
			for a := range n.Descendants() {
				if a.Type == html.ElementNode && a.Data == "a" {
					c.links = append(c.links, attr(a, "href"))
				}
			}
			cells[[2]string{attr(n, "data-lock"), attr(n, "data-class")}] = c
		case n.Type == html.ElementNode && n.Data == "li" && strings.HasPrefix(attr(n, "id"), "note-"):
			notes["#"+attr(n, "id")] = text(n)
		}
	}
	return cells, notes
}

// TestPageCells saves a table and reads every cell back from compare.html
// and compare.json: each cell that ran is coloured by its worst verdict,
// shows its word and k/N, links its worst run's page first and then every
// run's page; each "—" links a note that gives its reason; a user's lock
// and a program row are cells like any other.
func TestPageCells(t *testing.T) {
	table := fixture()
	dir := t.TempDir()
	if err := Save(dir, table); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var saved Table
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	cells, notes := readPage(t, filepath.Join(dir, PageFile))
	want := map[[2]string]string{ // the text each cell shows, word and k/N
		{"token-watchdog", Pause}: "illegalinherent 1/3", {"token-watchdog", CutOff}: "ok 3/3",
		{"exec:/usr/bin/python3 programs/redispy.py --renew", Pause}: "spoiled 1/3",
		{"exec:sh mine.sh", Pause}:                                   "illegaluntold 3/3", {"exec:sh mine.sh", Failover}: "ok 3/3",
	}
	n := 0
	for _, r := range saved.Rows {
		for _, c := range r.Cells {
			n++
			got, found := cells[[2]string{r.Lock, c.Class}]
			if !found {
				t.Errorf("%s × %s: not on the page", r.Lock, c.Class)
				continue
			}
			if c.Text == None {
				if len(got.links) != 1 || notes[got.links[0]] != c.Why {
					t.Errorf("%s × %s: — links %q to note %q; want its reason %q", r.Lock, c.Class, got.links, notes[got.links[0]], c.Why)
				}
				continue
			}
			var pages []string
			for _, run := range c.Runs {
				pages = append(pages, run.Page)
			}
			if got.verdict != c.Verdict || len(got.links) == 0 || got.links[0] != c.Page || !slices.Equal(got.links[1:], pages) {
				t.Errorf("%s × %s: %s, links %q; want %s, links %q then %q", r.Lock, c.Class, got.verdict, got.links, c.Verdict, c.Page, pages)
			}
			if w := want[[2]string{r.Lock, c.Class}]; !strings.HasPrefix(got.text, w) {
				t.Errorf("%s × %s shows %q; want %q first", r.Lock, c.Class, got.text, w)
			}
		}
	}
	if len(cells) != n || n != 9 {
		t.Errorf("%d cells on the page, %d in %s; want 9", len(cells), n, JSONFile)
	}
	if len(notes) != 2 {
		t.Errorf("notes %q; want each reason once", notes)
	}
}

// fixture is a table of three rows in two families, a user's lock and a
// program among them, with cells of one, two and three outcomes and "—"
// cells of two reasons.
func fixture() Table {
	ok := map[string]checker.Verdict{checker.CheckLock: checker.OK, checker.CheckResource: checker.OK, checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK}
	lost := map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.Illegal, checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK}
	inherent := map[string]checker.Kind{checker.CheckLock: checker.Inherent, checker.CheckResource: checker.Inherent}
	cellOfRuns := func(class string, runs ...reports.Run) Cell {
		c := Cell{Class: class, Scenario: "s-" + class}
		for i, r := range runs {
			c.Runs = append(c.Runs, runOf(i+1, r, "/out"))
		}
		return summarize(c)
	}
	run := func(dir string, v map[string]checker.Verdict, k map[string]checker.Kind) reports.Run {
		return reports.Run{Verdicts: v, Kinds: k, ReportDir: "/out/" + dir}
	}
	spoiled := run("sp", nil, nil)
	spoiled.Spoiled = []string{"the failpoint never fired"}
	return Table{Classes: Classes()[:3], Runs: 3, Families: families(nil), Rows: []RowResult{
		{Lock: "token-watchdog", Title: "Redis token + watchdog", Family: Redis, Cells: []Cell{
			cellOfRuns(Pause, run("a1", ok, nil), run("a2", lost, inherent), run("a3", ok, nil)),
			cellOfRuns(CutOff, run("b1", ok, nil), run("b2", ok, nil), run("b3", ok, nil)),
			{Class: Failover, Text: None, Why: "no lock node to kill"}}},
		{Lock: "exec:/usr/bin/python3 programs/redispy.py --renew", Title: "redis-py (program)", Family: Redis, Cells: []Cell{
			cellOfRuns(Pause, run("c1", ok, nil), spoiled, run("c3", ok, nil)),
			{Class: CutOff, Text: None, Why: "no lock node to kill"},
			{Class: Failover, Text: None, Why: "another reason"}}},
		{Lock: "exec:sh mine.sh", Title: "sh mine.sh", Own: true, Family: Database, Cells: []Cell{
			cellOfRuns(Pause, run("d1", lost, nil), run("d2", lost, nil), run("d3", lost, nil)),
			{Class: CutOff, Text: None, Why: "another reason"},
			cellOfRuns(Failover, run("e1", ok, nil), run("e2", ok, nil), run("e3", ok, nil))}},
	}}
}
