package watch

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// recorded is a saved run of del-release in pause-before-del: client 0
// pauses before its DEL, past its lease, then deletes another client's
// lock, and two clients hold it at once (first at 739 ms).
const recorded = "../reports/testdata/report/5-del-release-broken/history.jsonl"

func readRecorded(t *testing.T) []history.Op {
	t.Helper()
	ops, err := history.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// until is the moment at t of the run that recorded ops, as a live view
// would have been told it: what returned by then recorded, the releases
// and faults under way begun.
func until(ops []history.Op, t time.Duration) moment {
	m := moment{now: t}
	for _, op := range ops {
		switch {
		case op.Call > t:
		case op.Return != history.NeverReturned && op.Return <= t:
			m.ops = append(m.ops, op)
			m.ended = m.ended || op.Kind == history.KindEnd
		case op.Kind == history.KindRelease || op.Kind == history.KindFault:
			op.Return = history.NeverReturned
			m.begun = append(m.begun, op)
		}
	}
	return m
}

// rowOf is the lane labelled label, without its label.
func rowOf(t *testing.T, lanes []string, label string) string {
	t.Helper()
	for _, l := range lanes {
		if strings.HasPrefix(l, fmt.Sprintf("%-*s", labelWidth, label)) {
			return l[labelWidth:]
		}
	}
	t.Fatalf("no lane %q in\n%s", label, strings.Join(lanes, "\n"))
	return ""
}

// TestLanesOfRecordedHistory draws a whole recorded run: a lane per
// client and the probe, the pauses on the fault lane and on client 0's,
// and the overlaps where and as many as the lock checker sees them.
func TestLanesOfRecordedHistory(t *testing.T) {
	ops := readRecorded(t)
	p := newPicture(moment{ops: ops, ended: true})
	lanes := p.lanes()
	if want := 1 + 4 + 1 + 2; len(lanes) != want {
		t.Fatalf("%d lines, want %d (axis, 4 clients, probe, faults, overlap):\n%s", len(lanes), want, strings.Join(lanes, "\n"))
	}
	if !strings.HasPrefix(lanes[0], strings.Repeat(" ", labelWidth)+"0 s") || !strings.Contains(lanes[0], "2 s") {
		t.Errorf("axis %q: want 0 s to 2 s", lanes[0])
	}
	for c := range 4 {
		if row := rowOf(t, lanes, fmt.Sprintf("client %d", c)); !strings.ContainsRune(row, cellHold) {
			t.Errorf("client %d never holds: %q", c, row)
		}
	}
	if row := rowOf(t, lanes, "probe"); strings.Count(row, string(cellHold)) != 1 {
		t.Errorf("probe %q: want one hold at the end", row)
	}
	pause := p.cell(637 * time.Millisecond) // client 0's first pause, 637–739 ms
	if row := []rune(rowOf(t, lanes, "faults")); row[pause] != cellFault {
		t.Errorf("faults %q: no fault at cell %d", string(row), pause)
	}
	if row := []rune(rowOf(t, lanes, "client 0")); row[pause] != cellHeld && row[pause] != cellStalled {
		t.Errorf("client 0 %q: not paused at cell %d", string(row), pause)
	}

	_, later, ok := checker.FirstOverlap(ops)
	if !ok {
		t.Fatal("the lock checker sees no overlap in the recorded run")
	}
	overlapRow := rowOf(t, lanes, "overlap")
	cells := []rune(overlapRow)
	if cells[p.cell(later.Start)] != cellOverlap {
		t.Errorf("overlap %q: no mark at the first overlap (%s, cell %d)", overlapRow, later.Start, p.cell(later.Start))
	}
	if cells[p.cell(later.Start)-1] == cellOverlap {
		t.Errorf("overlap %q: marked before the first overlap (%s)", overlapRow, later.Start)
	}
	if want := fmt.Sprintf("  %d", len(p.overlaps)); !strings.HasSuffix(overlapRow, want) || len(p.overlaps) < 2 {
		t.Errorf("overlap %q: want it to end with the count of overlaps, %d", overlapRow, len(p.overlaps))
	}
	var told []event
	for _, e := range p.events {
		if strings.HasPrefix(e.text, "OVERLAP") {
			told = append(told, e)
		}
	}
	if len(told) != min(len(p.overlaps), maxOverlapEvents) || told[0].at != later.Start {
		t.Errorf("overlap events %v: want the first %d, the first at %s", told, maxOverlapEvents, later.Start)
	}
}

// TestOverlapAppears: the overlap is marked from the moment it happens,
// not before, and the lanes before it are those of the run so far.
func TestOverlapAppears(t *testing.T) {
	ops := readRecorded(t)
	_, later, _ := checker.FirstOverlap(ops)
	before := newPicture(until(ops, later.Start-time.Millisecond))
	if row := rowOf(t, before.lanes(), "overlap"); strings.ContainsRune(row, cellOverlap) || len(before.overlaps) > 0 {
		t.Errorf("1 ms before the first overlap (%s) the overlap lane is %q", later.Start, row)
	}
	if before.span != time.Second {
		t.Errorf("span %s at %s, want 1s: whole seconds while the run goes", before.span, before.now)
	}
	after := newPicture(until(ops, later.Start+5*time.Millisecond))
	row := []rune(rowOf(t, after.lanes(), "overlap"))
	if row[after.cell(later.Start)] != cellOverlap {
		t.Errorf("5 ms after the first overlap (%s) the overlap lane is %q", later.Start, string(row))
	}
	if rest := strings.TrimSpace(string(row[after.cell(after.now)+1:])); rest != fmt.Sprint(len(after.overlaps)) {
		t.Errorf("overlap lane %q: after now (%s, cell %d) %q, want only the count of overlaps", string(row), after.now, after.cell(after.now), rest)
	}
}

// TestBegunReleaseEndsHold: a release ends its hold when it is called, as
// the checkers count it, so that a release still under way (a pause before
// its DEL) is no overlap with the next holder.
func TestBegunReleaseEndsHold(t *testing.T) {
	ms := time.Millisecond
	ops := []history.Op{
		{Client: 0, Kind: history.KindAcquire, Key: "k", Call: 0, Return: 10 * ms, Outcome: models.OK},
		{Client: 1, Kind: history.KindAcquire, Key: "k", Call: 55 * ms, Return: 60 * ms, Outcome: models.OK},
	}
	release := history.Op{Client: 0, Kind: history.KindRelease, Key: "k", Call: 50 * ms, Return: history.NeverReturned}
	if p := newPicture(moment{ops: ops, begun: []history.Op{release}, now: 70 * ms}); len(p.overlaps) != 0 {
		t.Errorf("release begun at 50 ms, next hold at 60 ms: overlaps %v", p.overlaps)
	}
	if p := newPicture(moment{ops: ops, now: 70 * ms}); len(p.overlaps) != 1 {
		t.Errorf("no release, next hold at 60 ms: overlaps %v, want one", p.overlaps)
	}
}

// TestLivePlain replays the recorded run into a view on a plain writer:
// it prints the lanes, each event once, and the whole run at the end.
func TestLivePlain(t *testing.T) {
	var out bytes.Buffer
	l := Start(&out, "del-release broken in pause-before-del", false)
	for _, op := range readRecorded(t) {
		if op.Kind == history.KindRelease {
			l.Began(op)
		}
		l.Recorded(op)
	}
	l.Stop()
	text := out.String()
	for _, want := range []string{
		"del-release broken in pause-before-del · ended at 2.391 s",
		"client 3  ", "probe     ", "faults    ", "overlap   ",
		"  0.739 s  OVERLAP: client 2 holds the lock while client 1 still holds it (since 0.739 s)\n",
		"  0.637 s  fault: client pause (client 0)\n",
	} {
		if n := strings.Count(text, want); n != 1 {
			t.Errorf("%q printed %d times, want once:\n%s", want, n, text)
		}
	}
}

// TestLiveTerminal: on a terminal each frame is drawn over the last.
func TestLiveTerminal(t *testing.T) {
	var out bytes.Buffer
	l := &Live{out: &out, title: "run", tty: true}
	ops := readRecorded(t)
	for _, op := range ops[:len(ops)/2] {
		l.Recorded(op)
	}
	l.draw(false)
	first := strings.Count(out.String(), "\n")
	if first < 8 || strings.Contains(out.String(), "A\r") {
		t.Fatalf("first frame (%d lines) moves the cursor up or is short:\n%q", first, out.String())
	}
	out.Reset()
	for _, op := range ops[len(ops)/2:] {
		l.Recorded(op)
	}
	l.draw(true)
	if !strings.HasPrefix(out.String(), fmt.Sprintf("\x1b[%dA\r", first)) || !strings.HasSuffix(out.String(), clearDown) {
		t.Errorf("second frame does not draw over the first's %d lines:\n%q", first, out.String())
	}
	if !strings.Contains(out.String(), "  0.739 s  OVERLAP: client 2 holds the lock while client 1 still holds it") {
		t.Errorf("the last frame does not keep the first overlap among its events:\n%s", out.String())
	}
	if !strings.Contains(out.String(), red+string(cellOverlap)+reset) {
		t.Errorf("no red overlap in the last frame:\n%q", out.String())
	}
}

// TestLiveToldNothing: a run that never started draws nothing.
func TestLiveToldNothing(t *testing.T) {
	var out bytes.Buffer
	Start(&out, "run", false).Stop()
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
}

// BenchmarkFrame is the work of one frame of a run the size of the
// recorded one (1,200 operations), the view's cost ten times a second.
func BenchmarkFrame(b *testing.B) {
	ops, err := history.ReadFile(recorded)
	if err != nil {
		b.Fatal(err)
	}
	m := until(ops, 2*time.Second)
	for b.Loop() {
		_ = newPicture(m).lanes()
	}
}
