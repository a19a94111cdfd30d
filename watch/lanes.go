package watch

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/timeline"
)

// The characters of a frame's lanes.
const (
	cellIdle    = '·' // a client not holding the lock, or no fault in effect
	cellHold    = '█' // a client believes it holds the lock
	cellHeld    = '▓' // ... while a fault stops or slows it
	cellStalled = '░' // a fault stops or slows a client that holds nothing
	cellCrash   = 'X' // the client crashed
	cellFault   = '▒' // a fault is in effect
	cellOverlap = '!' // two clients believe they hold the lock at once
)

// Layout of a frame: a label column, then width cells of time.
const (
	labelWidth = 10
	width      = 60
)

// maxOverlapEvents is how many overlaps are told one by one; the overlap
// row counts them all. A lock that excludes nothing (pitfall 0) overlaps
// hundreds of times.
const maxOverlapEvents = 5

// moment is what the view knows of a run at one instant.
type moment struct {
	ops   []history.Op  // recorded so far, in the order recorded
	begun []history.Op  // begun and not yet recorded
	now   time.Duration // the run's clock
	ended bool          // the end record is in ops
}

// event is one thing of note, told once: a fault beginning or ending, a
// crash, an overlap.
type event struct {
	at   time.Duration
	key  string // tells events apart across frames
	text string
}

// picture is a frame of the view, worked out from a moment.
type picture struct {
	span     time.Duration // the time the lanes cover, from 0
	now      time.Duration
	clients  []int
	probe    map[int]bool
	holds    []checker.Hold
	faults   []history.Op // recorded and begun; a begun one lasts until now
	crashes  []history.Op
	overlaps []overlap
	events   []event
}

// overlap is a hold that began while another client's hold on the same key
// was still going: the lock checker's violation, as it appears.
type overlap struct{ a, b checker.Hold }

func (o overlap) to() time.Duration { return min(o.a.End, o.b.End) }

// newPicture sorts a moment into what a frame shows. Holds are the
// checkers' (checker.Holds), so a release ends a hold when it is called; a
// hold still open runs until now.
func newPicture(m moment) picture {
	p := picture{now: m.now, probe: map[int]bool{}}
	if m.ended {
		p.now = history.Last(m.ops)
	}
	ops := append(slices.Clip(m.ops), m.begun...)
	clients := map[int]bool{}
	for _, op := range ops {
		switch op.Kind {
		case history.KindAcquire, history.KindRelease, history.KindSection:
			clients[op.Client] = true
			if op.Probe {
				p.probe[op.Client] = true
			}
		case history.KindCrash:
			clients[op.Client] = true
			p.crashes = append(p.crashes, op)
		case history.KindFault:
			if op.Effect == history.EffectHarness {
				continue // the harness's own wait, not a fault of the scenario
			}
			if op.Client >= 0 {
				clients[op.Client] = true
			}
			p.faults = append(p.faults, op)
		}
	}
	for c := range clients {
		p.clients = append(p.clients, c)
	}
	slices.Sort(p.clients)
	p.holds = checker.Holds(ops)
	if !m.ended {
		for i, h := range p.holds {
			if h.EndedBy == history.KindEnd {
				p.holds[i].End = m.now
			}
		}
	}
	p.overlaps = overlaps(p.holds)
	// Whole seconds while the run goes, so that the lanes rescale once a
	// second and no more; the run's length once it ended.
	p.span = (p.now/time.Second + 1) * time.Second
	if m.ended {
		p.span = max(p.now, time.Millisecond)
	}
	p.events = events(p)
	return p
}

// overlaps are every two holds of different clients on one key where the
// later began before the earlier ended, in order of the later's start.
func overlaps(hs []checker.Hold) []overlap {
	var out []overlap
	for j, b := range hs {
		for _, a := range hs[:j] {
			if a.Key == b.Key && a.Client != b.Client && a.End > b.Start {
				out = append(out, overlap{a, b})
			}
		}
	}
	return out
}

// events are the picture's things of note, by time.
func events(p picture) []event {
	var out []event
	for _, f := range p.faults {
		// A fault is told when it begins and again when it ends: the same
		// client, call, kind and part, whatever its label says.
		id := fmt.Sprintf("%d/%d/%s/%s", f.Client, f.Call, f.FaultKind, f.Part)
		out = append(out, event{f.Call, "begin " + id, "fault: " + faultText(f)})
		if f.Return != history.NeverReturned {
			out = append(out, event{f.Return, "end " + id, fmt.Sprintf("healed after %s: %s", roundMS(f.Return-f.Call), faultText(f))})
		}
	}
	for _, c := range p.crashes {
		out = append(out, event{c.Call, fmt.Sprintf("crash %d/%d", c.Client, c.Call), fmt.Sprintf("client %d crashed", c.Client)})
	}
	for i, o := range p.overlaps {
		if i == maxOverlapEvents {
			break
		}
		out = append(out, event{o.b.Start, fmt.Sprintf("overlap %d/%d/%d/%d", o.a.Client, o.a.Start, o.b.Client, o.b.Start),
			fmt.Sprintf("OVERLAP: client %d holds the lock while client %d still holds it (since %s)", o.b.Client, o.a.Client, seconds(o.a.Start))})
	}
	slices.SortStableFunc(out, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	return out
}

// faultText names a fault and whom it strikes.
func faultText(f history.Op) string {
	s := f.Fault
	if f.Client >= 0 {
		s += fmt.Sprintf(" (client %d)", f.Client)
	}
	if f.Crux {
		s += ", the scenario's crux"
	}
	return s
}

// lanes draws the picture's rows: a time axis, one row per client, the
// faults and the overlaps.
func (p picture) lanes() []string {
	rows := []string{p.axis()}
	for _, c := range p.clients {
		label := fmt.Sprintf("client %d", c)
		if p.probe[c] {
			label = "probe"
		}
		rows = append(rows, row(label, p.clientCells(c), ""))
	}
	rows = append(rows, row("faults", p.faultCells(), ""))
	count := ""
	if n := len(p.overlaps); n > 0 {
		count = fmt.Sprint(n)
	}
	return append(rows, row("overlap", p.overlapCells(), count))
}

// row is a lane: its label, its cells, and a note after them; the cells
// after now are blank, and left out when nothing follows.
func row(label string, cells []rune, note string) string {
	return strings.TrimRight(fmt.Sprintf("%-*s%s  %s", labelWidth, label, string(cells), note), " ")
}

// axis labels the lanes' time, a label every nice step.
func (p picture) axis() string {
	line := []rune(strings.Repeat(" ", labelWidth+width+8))
	step := timeline.NiceStep(p.span, 4)
	for t := time.Duration(0); t <= p.span; t += step {
		at := labelWidth + p.cell(t)
		copy(line[at:], []rune(seconds(t)))
	}
	return strings.TrimRight(string(line), " ")
}

// cell is the cell that t falls in.
func (p picture) cell(t time.Duration) int {
	return min(int(int64(t)*width/int64(p.span)), width-1)
}

// cells are the blank cells of a lane: idle up to now, empty after.
func (p picture) cells() []rune {
	cs := make([]rune, width)
	for i := range cs {
		cs[i] = ' '
		if i <= p.cell(p.now) {
			cs[i] = cellIdle
		}
	}
	return cs
}

// paint sets the cells from from to to (to included; a span that ended
// before it began, as a hold cut at its start, paints its first cell).
func (p picture) paint(cs []rune, from, to time.Duration, r rune) {
	for i := p.cell(from); i <= p.cell(max(to, from)); i++ {
		cs[i] = r
	}
}

// clientCells is a client's lane: its holds, the faults that stop or slow
// it, its crash.
func (p picture) clientCells(c int) []rune {
	cs := p.cells()
	for _, h := range p.holds {
		if h.Client == c {
			p.paint(cs, h.Start, h.End, cellHold)
		}
	}
	for _, f := range p.faults {
		if f.Client != c {
			continue
		}
		end := p.ended(f)
		for i := p.cell(f.Call); i <= p.cell(end); i++ {
			if cs[i] == cellHold {
				cs[i] = cellHeld
			} else if cs[i] != cellHeld {
				cs[i] = cellStalled
			}
		}
	}
	for _, x := range p.crashes {
		if x.Client == c {
			p.paint(cs, x.Call, x.Call, cellCrash)
		}
	}
	return cs
}

// ended is when f ended, or now while it is in effect.
func (p picture) ended(f history.Op) time.Duration {
	if f.Return == history.NeverReturned {
		return p.now
	}
	return f.Return
}

// faultCells is the lane of every fault, whomever it strikes.
func (p picture) faultCells() []rune {
	cs := p.cells()
	for _, f := range p.faults {
		p.paint(cs, f.Call, p.ended(f), cellFault)
	}
	return cs
}

// overlapCells marks where two clients held the lock at once.
func (p picture) overlapCells() []rune {
	cs := p.cells()
	for _, o := range p.overlaps {
		p.paint(cs, o.b.Start, o.to(), cellOverlap)
	}
	return cs
}

// seconds prints a time since the start in seconds, to the millisecond.
func seconds(d time.Duration) string {
	ms := d.Round(time.Millisecond) / time.Millisecond
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + " s"
}

// roundMS prints a length to the millisecond.
func roundMS(d time.Duration) string { return d.Round(time.Millisecond).String() }
