package timeline

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
)

// golden is the folder of real runs the tests draw; reports' tests re-check
// the same runs.
const golden = "../reports/testdata/report"

// load reads a golden run's history and the verdicts check gave it.
func load(t *testing.T, run string) ([]history.Op, []checker.Check) {
	t.Helper()
	ops, err := history.ReadFile(filepath.Join(golden, run, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(golden, run, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Checks []checker.Check }
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return ops, res.Checks
}

// element is a node of a parsed SVG: enough to find lanes, labels and marks.
type element struct {
	name     string
	attr     map[string]string
	text     string
	children []*element
}

func parse(t *testing.T, svg []byte) *element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	root := &element{name: "root"}
	stack := []*element{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.children = append(top.children, e)
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			stack[len(stack)-1].text += string(tok)
		}
	}
	return root
}

// find lists the elements under e whose class has every word of class.
func (e *element) find(class string) []*element {
	var out []*element
	var walk func(*element)
	walk = func(n *element) {
		have := strings.Fields(n.attr["class"])
		ok := true
		for _, w := range strings.Fields(class) {
			ok = ok && slices.Contains(have, w)
		}
		if ok && n.name != "root" {
			out = append(out, n)
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(e)
	return out
}

// texts is every text under e, in order.
func (e *element) texts() []string {
	var out []string
	if e.name == "text" {
		out = append(out, e.text)
	}
	for _, c := range e.children {
		out = append(out, c.texts()...)
	}
	return out
}

func TestDraw(t *testing.T) {
	for _, tc := range []struct {
		run     string
		clients int
		zoomed  bool     // an overview strip and a zoomed view
		mark    string   // the class of the marked violation, "" for none
		labels  []string // labels the detailed view must show
		lanes   []string // lanes besides the clients and the lock key
		forbid  []string // classes that must not be there
	}{
		{run: "5-del-release-broken", clients: 4, zoomed: true, mark: "violation",
			labels: []string{"clients 1 and 2 both hold it (101 ms)", "read 999994", "wrote 999993", "paused 102 ms", "lease end (TTL 200 ms)"},
			lanes:  []string{"network"}, forbid: []string{"lesson"}},
		{run: "12-fenced-fixed", clients: 4, zoomed: true, mark: "lesson",
			labels: []string{"clients 0 and 2 both hold it (11 ms)", "write with token 8 refused", "paused 501 ms"},
			lanes:  []string{"network"}, forbid: []string{"violation"}},
		{run: "3-no-ttl-broken", clients: 4, mark: "stuck",
			labels: []string{"held by client 0 from 71 ms, never again free; the servers hold it with no expiry; 877 acquires refused", "crash"},
			lanes:  []string{"network"}},
		{run: "4-no-release-broken", clients: 4, zoomed: true, labels: []string{"idle 188 ms"}, lanes: []string{"network"},
			forbid: []string{"violation"}},
		{run: "11-redlock-clock-jump-broken", clients: 4, zoomed: true, mark: "violation",
			labels: []string{"clients 0 and 1 both hold it (97 ms)", "clock jump of 300ms on lock node 2", "partition client 0 from lock nodes [3 4], 2019 ms"},
			lanes:  []string{"node 2", "network"}},
		{run: "3-no-ttl-fixed", clients: 4, labels: []string{"crash"}, lanes: []string{"network"},
			forbid: []string{"violation", "lesson", "stuck", "overview"}},
	} {
		t.Run(tc.run, func(t *testing.T) {
			svg := Draw(load(t, tc.run))
			doc := parse(t, svg)
			detail := doc.find("view detail")
			if len(detail) != 1 {
				t.Fatalf("%d detailed views, want 1", len(detail))
			}
			if got := len(doc.find("view overview")) == 1; got != tc.zoomed {
				t.Errorf("overview strip: %v, want %v", got, tc.zoomed)
			}
			if got := len(detail[0].find("lane client-lane")); got != tc.clients {
				t.Errorf("%d client lanes, want %d", got, tc.clients)
			}
			var lanes []string
			for _, l := range detail[0].find("lane") {
				lanes = append(lanes, l.texts()[0])
			}
			for _, want := range append([]string{"lock key"}, tc.lanes...) {
				if !slices.Contains(lanes, want) {
					t.Errorf("no lane %q among %q", want, lanes)
				}
			}
			var labels []string
			for _, l := range detail[0].find("label") {
				labels = append(labels, l.text)
			}
			for _, want := range tc.labels {
				if !slices.Contains(labels, want) {
					t.Errorf("no label %q among %q", want, labels)
				}
			}
			if tc.mark != "" && len(detail[0].find(tc.mark)) == 0 {
				t.Errorf("the violation is not marked with class %q", tc.mark)
			}
			for _, c := range tc.forbid {
				if len(doc.find(c)) > 0 {
					t.Errorf("an element of class %q, which this run should not have", c)
				}
			}
			checkNoOverlap(t, detail[0])
		})
	}
}

// TestMachineLane: a run whose end record has late stretches gets a
// machine lane that draws those in view; a run without has none.
func TestMachineLane(t *testing.T) {
	ops, checks := load(t, "4-no-release-broken")
	if svg := Draw(ops, checks); len(parse(t, svg).find("late")) > 0 {
		t.Fatal("a run with no late stretch drew some")
	}
	// Two stretches that cover the run, so that a zoomed view shows one.
	last := history.Last(ops)
	late := []history.Span{{From: 0, To: last / 2}, {From: last/2 + time.Millisecond, To: last}}
	for i, op := range ops {
		if op.Kind == history.KindEnd {
			e := *op.End
			e.Late = late
			ops[i].End = &e
		}
	}
	detail := parse(t, Draw(ops, checks)).find("view detail")[0]
	for _, l := range detail.find("lane") {
		if l.texts()[0] != "machine" {
			continue
		}
		if got := len(l.find("late")); got < 1 || got > len(late) {
			t.Errorf("the machine lane draws %d late stretches, want 1 or 2", got)
		}
		return
	}
	t.Error("no machine lane")
}

// checkNoOverlap fails when two labels of one lane share a row and their
// estimated extents meet.
func checkNoOverlap(t *testing.T, view *element) {
	t.Helper()
	for _, lane := range view.find("lane") {
		type box struct{ x0, x1, y float64 }
		var boxes []box
		for _, l := range lane.find("label") {
			x, _ := strconv.ParseFloat(l.attr["x"], 64)
			y, _ := strconv.ParseFloat(l.attr["y"], 64)
			boxes = append(boxes, box{x, x + textW(l.text), y})
		}
		for i, a := range boxes {
			for _, b := range boxes[:i] {
				if a.y == b.y && a.x0 < b.x1 && b.x0 < a.x1 {
					t.Errorf("labels overlap in lane %q at y=%v: %.0f–%.0f and %.0f–%.0f", lane.texts()[0], a.y, a.x0, a.x1, b.x0, b.x1)
				}
			}
		}
	}
}

func TestLayout(t *testing.T) {
	for _, tc := range []struct {
		labels []label
		want   []int
	}{
		// A label takes the first row free at its x; one at the right edge
		// is moved left to fit, and so meets the labels before it.
		{[]label{{x: 0, text: "aaaaaaaaaa"}, {x: 10, text: "bbbb"}, {x: 100, text: "c"}, {x: 20, text: "dddd"},
			{x: 30, text: "e"}, {x: 40, text: "f"}, {x: 50, text: "g"}, {x: 1195, text: "near the right edge"}, {x: 1100, text: "x"}},
			[]int{0, 1, 0, 2, 3, 4, 1, 1, 0}},
		// Labels that find no free row are left out, never drawn on top of another.
		{[]label{{text: "a"}, {text: "b"}, {text: "c"}, {text: "d"}, {text: "e"}, {text: "f"}}, []int{0, 1, 2, 3, 4, -1}},
	} {
		if rows := layout(tc.labels, 1200); !slices.Equal(rows, tc.want) {
			t.Errorf("rows %v, want %v", rows, tc.want)
		}
	}
}

func TestStory(t *testing.T) {
	for _, tc := range []struct {
		run  string
		want []string // the steps, in order; the marked ones start with "!" (violation), "+" (lesson) or "*" (cause)
	}{
		{"5-del-release-broken", []string{
			"client 0 acquires the lock",
			"client 0 is paused (stop-the-world) for 102 ms",
			"client 0's lease ends (TTL 200 ms) unless renewed",
			"client 1 acquires the lock",
			"*client 0's late release (sent at 637 ms) deletes client 1's lock",
			"!client 2 acquires the lock while client 1 holds it",
			"client 2 writes 999993",
			"!client 1 writes 999993: two sales, one decrement, a write lost",
		}},
		{"12-fenced-fixed", []string{
			"client 0 acquires the lock (token 8)",
			"client 0 is paused (stop-the-world) for 501 ms",
			"*client 0's lease runs out on the server, 200 ms after its acquire returned",
			"+client 2 acquires the lock (token 9) while client 0 holds it",
			"client 3 writes with token 29",
			"+client 0 writes with token 8: the resource refuses it, it saw token 29",
		}},
		{"3-no-ttl-broken", []string{
			"client 0 acquires the lock",
			"client 0 crashes (failpoint critical-section)",
			"client 1 asks for the lock: refused",
			"877 acquires refused since 71 ms",
			"!the run ends: the servers still hold the lock, with no expiry; a fresh client gets no lock within 1120 ms",
		}},
		{"4-no-release-broken", []string{
			"client 3 acquires the lock",
			"client 3 is done, but the lock stays taken",
			"client 2 asks for the lock: refused",
			"!client 2 acquires the lock after it sat idle 188 ms",
		}},
		{"11-redlock-clock-jump-broken", []string{
			"partition client 0 from lock nodes [3 4]",
			"client 0 acquires the lock",
			"client 0 reads stock 999995",
			"clock jump of 300ms on lock node 2",
			"!client 1 acquires the lock while client 0 holds it",
			"client 1 reads stock 999995 too",
			"client 0 writes 999994",
			"!client 1 writes 999994: two sales, one decrement, a write lost",
		}},
		{"3-no-ttl-fixed", nil},
	} {
		t.Run(tc.run, func(t *testing.T) {
			ops, checks := load(t, tc.run)
			story := Story(ops, checks)
			var got []string
			for i, e := range story {
				s := e.Text
				switch {
				case e.Violation:
					s = "!" + s
				case e.Lesson:
					s = "+" + s
				case e.Cause:
					s = "*" + s
				}
				got = append(got, s)
				if i > 0 && e.At < story[i-1].At {
					t.Errorf("step %d at %s comes before step %d at %s", i, e.At, i-1, story[i-1].At)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("story:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if len(got) > MaxEvents || (len(got) > 0 && len(got) < 4) {
				t.Errorf("%d steps, want 4 to %d", len(got), MaxEvents)
			}
			seq, ok := Sequence(ops, checks)
			if ok != (tc.want != nil) {
				t.Fatalf("Sequence drew: %v, want %v", ok, tc.want != nil)
			}
			if ok {
				doc := parse(t, seq)
				if n := len(doc.find("step")); n != len(tc.want) {
					t.Errorf("the sequence diagram has %d steps, want %d", n, len(tc.want))
				}
				_, caused := CauseOf(story)
				if n := len(doc.find("step cause")); n != map[bool]int{true: 1}[caused] {
					t.Errorf("the sequence diagram draws %d cause steps; the story has a cause: %v", n, caused)
				}
			}
		})
	}
}

func TestLesson(t *testing.T) {
	for run, want := range map[string]string{
		"12-fenced-fixed":      "lock illegal, resource ok: the resource refused token 8 after 29",
		"5-del-release-broken": "",
		"3-no-ttl-fixed":       "",
	} {
		if got := Lesson(load(t, run)); got != want {
			t.Errorf("%s: lesson %q, want %q", run, got, want)
		}
	}
}

func TestSchedule(t *testing.T) {
	for run, want := range map[string][]string{
		"5-del-release-broken": {
			"0.64 s: client 0 paused for 102 ms (before DEL (release command 1))",
			"1.15 s: client 0 paused for 2 ms (after DEL (release command 1))",
			"1.66 s: client 0 paused for 101 ms (before DEL (release command 1))",
			"2.07 s: client 0 paused for 5 ms (after DEL (release command 1))",
		},
		"3-no-ttl-broken": {"0.07 s: client 0 crashed (critical-section)"},
		"11-redlock-clock-jump-broken": {
			"0.01 s: partition client 0 from lock nodes [3 4] (connections reset and refused), for 2019 ms",
			"0.54 s: clock jump of 300ms on lock node 2 (simulated: every TTL on it shortened by 300ms at once, because libfaketime breaks redis-server's start-up here) (at failpoint critical-section)",
			"0.65 s: clock jump of 300ms on lock node 2 (simulated: every TTL on it shortened by 300ms at once, because libfaketime breaks redis-server's start-up here) (at failpoint critical-section)",
		},
	} {
		ops, _ := load(t, run)
		if got := Schedule(ops); !slices.Equal(got, want) {
			t.Errorf("%s: schedule\n  %s\nwant\n  %s", run, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}

func TestNiceStep(t *testing.T) {
	for span, want := range map[float64]float64{2391: 500, 126: 20, 7512: 1000, 9: 1} {
		got := NiceStep(msDur(span), 10)
		if math.Abs(float64(got)-float64(msDur(want))) > 0 {
			t.Errorf("NiceStep(%v ms) = %v, want %v ms", span, got, want)
		}
	}
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
