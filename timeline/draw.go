package timeline

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
)

// Width is the width of every drawing in SVG units; the page scales it.
const Width = 1200

// Drawing geometry, in SVG units.
const (
	laneLabelW = 110 // the lane names on the left
	rightPad   = 14
	barH       = 14 // a hold, a fault, a pause
	rowH       = 13 // one row of labels under the bars
	maxRows    = 5  // labels that would need more rows are left out
	charW      = 6.1
	compactH   = 9 // a lane of the overview strip
)

// Draw is the timeline of a run as one SVG document: when the run has a
// violation, an overview strip of the whole run with the zoomed window
// marked, then the zoomed view around the first violation; otherwise the
// whole run in detail. Each client has a lane (holds as bars from the
// acquire's reply to the release, refused acquires as ticks, crashes as
// crosses, pauses and slow work hatched, the lease's end where it would
// expire without renewal), then the lock key (overlaps, idle gaps, a key
// nobody gets again), each node, and the network.
func Draw(ops []history.Op, checks []checker.Check) []byte {
	s := newScene(ops, checks)
	var body bytes.Buffer
	y := 0.0
	from, to, zoomed := s.zoom()
	if zoomed {
		y = s.view(&body, y, view{from: 0, to: s.last, compact: true, window: [2]time.Duration{from, to},
			title: fmt.Sprintf("the whole run, 0–%s; the box is the window below", msText(s.last))})
		y += 10
		y = s.view(&body, y, view{from: from, to: to,
			title: fmt.Sprintf("around the first violation, %s–%s", msText(from), msText(to))})
	} else {
		y = s.view(&body, y, view{from: 0, to: s.last, title: fmt.Sprintf("the whole run, 0–%s", msText(s.last))})
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 %d %.0f" width="%d" height="%.0f" font-family="system-ui, sans-serif" font-size="11" role="img" aria-label="timeline of the run">`,
		Width, y, Width, y)
	out.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#b35900" stroke-width="2"/></pattern>` +
		`<pattern id="idle" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="6" height="6" fill="#fff3e0"/><line x1="0" y1="0" x2="0" y2="6" stroke="#e08a00" stroke-width="1.5"/></pattern></defs>`)
	out.Write(body.Bytes())
	out.WriteString("</svg>\n")
	return out.Bytes()
}

// view is one drawing of the lanes over a window of time.
type view struct {
	from, to time.Duration
	compact  bool             // the overview strip: thin lanes, no labels
	window   [2]time.Duration // in the overview, the zoomed window
	title    string
}

// zoom is the window around the first violation's story, or false when
// there is none worth zooming into.
func (s *scene) zoom() (from, to time.Duration, ok bool) {
	story := s.story()
	if len(story) == 0 {
		return 0, 0, false
	}
	from, to = story[0].At, story[len(story)-1].At
	if s.overlap != nil {
		from, to = min(from, s.overlap.a.Start), max(to, s.overlap.to())
	}
	span := max(to-from, 20*time.Millisecond)
	from, to = max(0, from-span/8), min(s.last, to+span/8)
	if to-from > s.last*9/10 {
		return 0, 0, false // the story is the whole run: one detailed view says it all
	}
	return from, to, true
}

// lane is one row of a view while it is being laid out.
type lane struct {
	name, class string
	client      int // for client lanes; -1 otherwise
	note        string
	shapes      bytes.Buffer // drawn relative to the lane's top
	labels      []label
}

type label struct {
	x     float64
	text  string
	class string
}

// x is where time t falls across the width of view v.
func (v view) x(t time.Duration) float64 {
	return laneLabelW + float64(t-v.from)/float64(max(v.to-v.from, 1))*(Width-laneLabelW-rightPad)
}

// visible reports whether the span from a to b shows in view v.
func (v view) visible(a, b time.Duration) bool { return b >= v.from && a <= v.to }

// clampX is x held within the drawing: a span that began before the view
// or ends after it is cut at its edge.
func (v view) clampX(t time.Duration) float64 {
	return math.Max(laneLabelW, math.Min(Width-rightPad, v.x(t)))
}

// barHeight is the height of a bar in view v: the overview strip's lanes
// are thin, so that the whole run fits above the zoomed view.
func (v view) barHeight() float64 {
	if v.compact {
		return compactH
	}
	return barH
}

// view draws v at height y and returns the height below it.
func (s *scene) view(out *bytes.Buffer, y float64, v view) float64 {
	cls := "detail"
	if v.compact {
		cls = "overview"
	}
	fmt.Fprintf(out, `<g class="view %s" transform="translate(0 %.0f)">`, cls, y)
	fmt.Fprintf(out, `<text x="4" y="12" font-weight="bold">%s</text>`, esc(v.title))
	ls := s.newLanes(v)
	s.drawClientLanes(v, ls.client)
	s.drawKeyLane(v, ls.key)
	tops, bottom := writeLanes(out, v, ls.all, 20)
	s.markOverlap(out, v, ls.client, tops)
	markWindow(out, v, bottom)
	bottom = axis(out, bottom+4, v)
	out.WriteString("</g>")
	return y + bottom
}

// viewLanes are the lanes of a view in drawing order, with the client
// lanes and the lock key's at hand, as the scene's marks go into those.
type viewLanes struct {
	all    []*lane
	client map[int]*lane
	key    *lane
}

// newLanes are the lanes of view v: one per client, the lock key's, then
// the faults' (each node, the master, Sentinel, the system), drawn
// already, and the network's.
func (s *scene) newLanes(v view) viewLanes {
	ls := viewLanes{client: map[int]*lane{}, key: &lane{name: "lock key", class: "key-lane", client: -1}}
	for _, c := range s.clients {
		l := &lane{name: fmt.Sprintf("client %d", c), class: "client-lane", client: c}
		if n := len(s.refused[c]); n > 0 && !v.compact {
			l.note = fmt.Sprintf("%d refused", n)
		}
		ls.all = append(ls.all, l)
		ls.client[c] = l
	}
	ls.all = append(ls.all, ls.key)
	for _, name := range s.lanes {
		if name == "network" {
			continue
		}
		ls.all = append(ls.all, s.faultLane(name, v))
	}
	// The network has its lane even with no fault in it: a quiet network
	// is part of what the run says.
	ls.all = append(ls.all, s.faultLane("network", v))
	if s.end != nil && len(s.end.Late) > 0 {
		ls.all = append(ls.all, s.machineLane(v))
	}
	return ls
}

// machineLane draws the stretches in which the machine ran the harness
// late (the end record's late): what excuses a slow handover, shown so
// that a reader can weigh it.
func (s *scene) machineLane(v view) *lane {
	l := &lane{name: "machine", class: "fault-lane", client: -1}
	var late time.Duration
	for _, sp := range s.end.Late {
		late += sp.To - sp.From
		if !v.visible(sp.From, sp.To) {
			continue
		}
		x0, x1 := v.clampX(sp.From), v.clampX(sp.To)
		fmt.Fprintf(&l.shapes, `<rect class="late" x="%.1f" y="0" width="%.1f" height="%.0f" fill="#9a9a9a"><title>the harness ran %s late, %s–%s</title></rect>`,
			x0, math.Max(x1-x0, 1), v.barHeight(), msText(sp.To-sp.From), msText(sp.From), msText(sp.To))
	}
	if !v.compact {
		l.note = "ran late " + msText(late)
	}
	return l
}

// drawClientLanes draws what each client did and what befell it in its
// lane. The order matters: later shapes paint over earlier ones, and
// labels at the same x keep it when laid out in rows.
func (s *scene) drawClientLanes(v view, lanes map[int]*lane) {
	s.drawHolds(v, lanes)
	s.drawRefusals(v, lanes)
	s.drawPauses(v, lanes)
	s.drawCrashes(v, lanes)
	s.drawLostUpdate(v, lanes)
	s.drawRefusedWrite(v, lanes)
}

// drawHolds draws each client's holds, with the lease's end where the
// hold outlived it, or where the story turns on it.
func (s *scene) drawHolds(v view, lanes map[int]*lane) {
	bh, ttl, story := v.barHeight(), s.ttl(), s.storyHolds()
	for _, h := range s.holds {
		l := lanes[h.Client]
		if l == nil || !v.visible(h.Start, h.End) {
			continue
		}
		x0, x1 := v.clampX(h.Start), v.clampX(h.End)
		fill := "#4a7bd0"
		if s.perNode() {
			fill = clientColour(h.Client) // as in the node lanes
		}
		fmt.Fprintf(&l.shapes, `<rect class="hold" x="%.1f" y="0" width="%.1f" height="%.0f" fill="%s"><title>client %d holds the lock %s–%s</title></rect>`,
			x0, math.Max(x1-x0, 1), bh, fill, h.Client, msText(h.Start), msText(h.End))
		inStory := story[holdKey(h)]
		if ttl > 0 && (h.Start+ttl < h.End || inStory) && v.visible(h.Start+ttl, h.Start+ttl) {
			xe := v.x(h.Start + ttl)
			fmt.Fprintf(&l.shapes, `<line class="lease-end" x1="%.1f" x2="%.1f" y1="-2" y2="%.0f" stroke="#b30000" stroke-width="2" stroke-dasharray="3 2"><title>client %d's lease ends at %s unless renewed (TTL %s)</title></line>`,
				xe, xe, bh+2, h.Client, msText(h.Start+ttl), msText(ttl))
			if !v.compact && inStory {
				l.labels = append(l.labels, label{x: xe, text: "lease end (TTL " + msText(ttl) + ")", class: "warn"})
			}
		}
	}
}

// storyHolds are the holds, by holdKey, that the first overlap's story is
// about: the two that overlap and the one whose client's late release is
// the cause. Their
// lease ends are labelled, as the story turns on them.
func (s *scene) storyHolds() map[[2]int64]bool {
	story := map[[2]int64]bool{}
	if s.overlap == nil {
		return story
	}
	for _, h := range []checker.Hold{s.overlap.a, s.overlap.b} {
		story[holdKey(h)] = true
	}
	if _, h, ok := s.cause(s.overlap.a, s.overlap.b); ok && h != nil {
		story[holdKey(*h)] = true
	}
	return story
}

// holdKey names a hold by its client and start: a client starts one hold
// at a time.
func holdKey(h checker.Hold) [2]int64 { return [2]int64{int64(h.Client), int64(h.Start)} }

// drawRefusals draws each client's refused acquires as ticks under its
// holds.
func (s *scene) drawRefusals(v view, lanes map[int]*lane) {
	bh := v.barHeight()
	for c, ts := range s.refused {
		l := lanes[c]
		if l == nil {
			continue
		}
		// One tick per unit of width is all the eye can see, and one path
		// for all of them keeps a run of thousands of refusals small.
		drawn := map[int]bool{}
		var d bytes.Buffer
		for _, t := range ts {
			if !v.visible(t, t) || drawn[int(v.x(t))] {
				continue
			}
			drawn[int(v.x(t))] = true
			fmt.Fprintf(&d, "M%d %.0fv4", int(v.x(t)), bh+1)
		}
		if d.Len() > 0 {
			fmt.Fprintf(&l.shapes, `<path class="refused" d="%s" stroke="#777" stroke-width="1"><title>%d acquires refused</title></path>`, d.String(), len(ts))
		}
	}
}

// drawPauses draws each client's own pauses and slow work, hatched; only
// those of a millisecond or more are labelled, as shorter ones are noise.
func (s *scene) drawPauses(v view, lanes map[int]*lane) {
	bh := v.barHeight()
	for c, fs := range s.hatched {
		l := lanes[c]
		if l == nil {
			continue
		}
		for _, f := range fs {
			if !v.visible(f.Call, f.Return) {
				continue
			}
			x0, x1 := v.clampX(f.Call), v.clampX(f.Return)
			fmt.Fprintf(&l.shapes, `<rect class="pause" x="%.1f" y="0" width="%.1f" height="%.0f" fill="url(#hatch)" stroke="#b35900"><title>%s</title></rect>`,
				x0, math.Max(x1-x0, 2), bh, esc(shortLabel(f)+" "+msText(f.Return-f.Call)+": "+f.Detail))
			if !v.compact && f.Return-f.Call >= time.Millisecond {
				l.labels = append(l.labels, label{x: x0, text: shortLabel(f) + " " + msText(f.Return-f.Call)})
			}
		}
	}
}

// drawCrashes draws each client's crashes as crosses.
func (s *scene) drawCrashes(v view, lanes map[int]*lane) {
	bh := v.barHeight()
	for _, c := range s.crashes {
		l := lanes[c.Client]
		if l == nil || !v.visible(c.Call, c.Call) {
			continue
		}
		xc, m := v.x(c.Call), bh/2
		fmt.Fprintf(&l.shapes, `<g class="crash" stroke="#c00" stroke-width="2.5"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><title>client %d crashed at %s</title></g>`,
			xc-m, 0.0, xc+m, bh, xc-m, bh, xc+m, 0.0, c.Client, msText(c.Call))
		if !v.compact {
			l.labels = append(l.labels, label{x: xc - m, text: "crash", class: "bad"})
		}
	}
}

// drawLostUpdate marks, in the detailed view only (the marks need their
// labels), the read and the write of both sections of the first lost
// update.
func (s *scene) drawLostUpdate(v view, lanes map[int]*lane) {
	if s.lost == nil || v.compact {
		return
	}
	bh := v.barHeight()
	for _, op := range []history.Op{s.lost.a, s.lost.b} {
		l := lanes[op.Client]
		if l == nil {
			continue
		}
		for _, p := range []struct {
			at   time.Duration
			text string
		}{{op.Call, fmt.Sprintf("read %d", op.Observed)}, {op.Return, fmt.Sprintf("wrote %d", op.Written)}} {
			if v.visible(p.at, p.at) {
				fmt.Fprintf(&l.shapes, `<circle class="lost-write" cx="%.1f" cy="%.1f" r="4" fill="#fff" stroke="#c00" stroke-width="2"/>`, v.x(p.at), bh/2)
				l.labels = append(l.labels, label{x: v.x(p.at) - 3, text: p.text, class: "bad"})
			}
		}
	}
}

// drawRefusedWrite marks, in the detailed view only, the write the
// resource refused for its stale token: the fencing lesson.
func (s *scene) drawRefusedWrite(v view, lanes map[int]*lane) {
	r := s.refusal
	if r == nil || v.compact || !v.visible(r.section.Return, r.section.Return) {
		return
	}
	if l := lanes[r.section.Client]; l != nil {
		xr := v.x(r.section.Return)
		fmt.Fprintf(&l.shapes, `<circle class="refused-write" cx="%.1f" cy="%.1f" r="4" fill="#fff" stroke="#1a7f37" stroke-width="2"/>`, xr, v.barHeight()/2)
		l.labels = append(l.labels, label{x: xr - 3, text: fmt.Sprintf("write with token %d refused", r.section.Token), class: "good"})
	}
}

// drawKeyLane draws in the lock key's lane what went wrong with the key
// itself: two clients holding it at once, idle gaps while someone waited,
// a key nobody gets again.
func (s *scene) drawKeyLane(v view, key *lane) {
	bh := v.barHeight()
	if o := s.overlap; o != nil && v.visible(o.b.Start, o.to()) {
		fill := "#d62728"
		if s.lesson() {
			fill = "#1a7f37"
		}
		x0, x1 := v.clampX(o.b.Start), v.clampX(o.to())
		fmt.Fprintf(&key.shapes, `<rect x="%.1f" y="0" width="%.1f" height="%.0f" fill="%s"/>`, x0, math.Max(x1-x0, 2), bh, fill)
		if !v.compact {
			key.labels = append(key.labels, label{x: x0, text: fmt.Sprintf("clients %d and %d both hold it (%s)", o.a.Client, o.b.Client, msText(o.to()-o.b.Start)), class: s.markClass()})
		}
	}
	for _, g := range s.idle {
		if !v.visible(g.from, g.to) {
			continue
		}
		x0, x1 := v.clampX(g.from), v.clampX(g.to)
		fmt.Fprintf(&key.shapes, `<rect class="idle" x="%.1f" y="0" width="%.1f" height="%.0f" fill="url(#idle)" stroke="#e08a00"><title>free for %s while client %d waited</title></rect>`,
			x0, math.Max(x1-x0, 1), bh, msText(g.to-g.from), g.next)
		if !v.compact {
			key.labels = append(key.labels, label{x: x0, text: "idle " + msText(g.to-g.from), class: "warn"})
		}
	}
	if k := s.stuck; k != nil && v.visible(k.from, s.last) {
		x0, x1 := v.clampX(k.from), v.clampX(s.last)
		fmt.Fprintf(&key.shapes, `<rect class="stuck violation" x="%.1f" y="0" width="%.1f" height="%.0f" fill="#9467bd"/>`, x0, math.Max(x1-x0, 2), bh)
		if !v.compact {
			key.labels = append(key.labels, label{x: x0, text: s.stuckWords(), class: "bad"})
		}
	}
}

// writeLanes writes lanes one under the other from top, and returns the
// top of each, for the marks that span lanes, and the bottom of the last.
func writeLanes(out *bytes.Buffer, v view, lanes []*lane, top float64) (tops map[*lane]float64, bottom float64) {
	tops = map[*lane]float64{}
	for _, l := range lanes {
		rows := layout(l.labels, Width-rightPad)
		tops[l] = top
		writeLane(out, v, l, rows, top)
		top += laneHeight(v, rows)
	}
	return tops, top
}

// laneHeight is the height of a lane whose labels lie in rows: in the
// detailed view a lane grows by a row for each row of labels, so that
// none hides another.
func laneHeight(v view, rows []int) float64 {
	bh := v.barHeight()
	if v.compact {
		return bh + 6
	}
	nrows := 0
	for _, r := range rows {
		nrows = max(nrows, r+1)
	}
	if nrows == 0 {
		return bh + 10
	}
	return bh + 10 + float64(nrows)*rowH
}

// writeLane writes lane l at top, its labels in their rows; a label
// layout found no row for is left out.
func writeLane(out *bytes.Buffer, v view, l *lane, rows []int, top float64) {
	bh := v.barHeight()
	fmt.Fprintf(out, `<g class="lane %s"%s transform="translate(0 %.0f)">`, l.class, clientAttr(l), top+3)
	fmt.Fprintf(out, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, laneLabelW, Width-rightPad, bh/2, bh/2)
	if v.compact {
		fmt.Fprintf(out, `<text x="4" y="%.0f" font-size="9">%s</text>`, bh-1, esc(l.name))
	} else {
		fmt.Fprintf(out, `<text x="4" y="%.0f">%s</text>`, bh-3, esc(l.name))
		if l.note != "" {
			fmt.Fprintf(out, `<text x="4" y="%.0f" font-size="9" fill="#666">%s</text>`, bh+8, esc(l.note))
		}
	}
	out.Write(l.shapes.Bytes())
	for i, lb := range l.labels {
		if rows[i] < 0 {
			continue
		}
		lx := math.Min(lb.x, Width-rightPad-textW(lb.text))
		fmt.Fprintf(out, `<text class="label %s" x="%.1f" y="%.0f"%s>%s</text>`, lb.class, lx, bh+11+float64(rows[i])*rowH, fillOf(lb.class), esc(lb.text))
	}
	out.WriteString("</g>")
}

// markOverlap frames the first overlap across the lanes of both clients,
// drawn over the lanes so that the eye finds it first.
func (s *scene) markOverlap(out *bytes.Buffer, v view, lanes map[int]*lane, tops map[*lane]float64) {
	o := s.overlap
	if o == nil || !v.visible(o.b.Start, o.to()) {
		return
	}
	la, lb := lanes[o.a.Client], lanes[o.b.Client]
	if la == nil || lb == nil {
		return
	}
	y0 := math.Min(tops[la], tops[lb]) + 1
	y1 := math.Max(tops[la], tops[lb]) + v.barHeight() + 5
	x0, x1 := v.clampX(o.b.Start), v.clampX(o.to())
	stroke, fill, dash := "#d62728", "#d62728", ""
	if s.lesson() {
		stroke, fill, dash = "#1a7f37", "#1a7f37", ` stroke-dasharray="5 3"`
	}
	fmt.Fprintf(out, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.22" stroke="%s" stroke-width="2"%s><title>clients %d and %d both held the lock from %s to %s</title></rect>`,
		s.markClass(), x0-1, y0, math.Max(x1-x0, 3)+2, y1-y0, fill, stroke, dash, o.a.Client, o.b.Client, msText(o.b.Start), msText(o.to()))
}

// markWindow boxes, in the overview strip, the window the zoomed view
// below it shows, from under the title down to bottom.
func markWindow(out *bytes.Buffer, v view, bottom float64) {
	if v.window[1] <= 0 {
		return
	}
	x0, x1 := v.clampX(v.window[0]), v.clampX(v.window[1])
	fmt.Fprintf(out, `<rect class="window" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="none" stroke="#222" stroke-width="1.5" stroke-dasharray="4 2"/>`,
		x0, 18.0, math.Max(x1-x0, 3), bottom-16)
}

// faultLane draws the faults of one node, Sentinel, the master, or the
// network; a lock node's lane also shows whom the node held the key for.
func (s *scene) faultLane(name string, v view) *lane {
	l := &lane{name: name, class: "fault-lane", client: -1}
	bh := v.barHeight()
	node, isNode := -1, false
	if n, err := strconv.Atoi(strings.TrimPrefix(name, "node ")); err == nil && strings.HasPrefix(name, "node ") {
		node, isNode = n, true
	}
	holds := isNode && (len(s.nodeHolds[node]) > 0 || len(s.nodeTicks[node]) > 0)
	if holds {
		l.class = "fault-lane node-lane"
		s.drawNodeHolds(l, node, v)
	}
	for _, f := range s.faults[name] {
		if !v.visible(f.Call, f.Return) {
			continue
		}
		x0, x1 := v.clampX(f.Call), v.clampX(f.Return)
		if f.Part == history.PartFailover {
			s.drawFailover(l, f, v, x0, x1)
			continue
		}
		look := `fill-opacity="0.8"`
		if holds {
			look = `fill-opacity="0.45" stroke="#f0a04b"` // the holds under it still show
		}
		fmt.Fprintf(&l.shapes, `<rect class="fault" x="%.1f" y="0" width="%.1f" height="%.0f" fill="#f0a04b" %s><title>%s, %s–%s%s</title></rect>`,
			x0, math.Max(x1-x0, 3), bh, look, esc(f.Fault), msText(f.Call), msText(f.Return), esc(detailSuffix(f)))
		if !v.compact {
			text := shortLabel(f)
			if f.Return-f.Call >= 5*time.Millisecond { // shorter is an instant: its length is noise
				text += ", " + msText(f.Return-f.Call)
			}
			l.labels = append(l.labels, label{x: x0, text: text})
		}
	}
	return l
}

// drawFailover draws a Sentinel failover: the span from the master's kill
// to the promotion as the failover in progress, and the promotion itself
// at the moment Sentinel made it, labelled with what it did.
func (s *scene) drawFailover(l *lane, f history.Op, v view, x0, x1 float64) {
	bh := v.barHeight()
	fmt.Fprintf(&l.shapes, `<rect class="fault failover" x="%.1f" y="0" width="%.1f" height="%.0f" fill="#e377c2" fill-opacity="0.35" stroke="#e377c2"><title>Sentinel failover in progress, %s–%s</title></rect>`,
		x0, math.Max(x1-x0, 3), bh, msText(f.Call), msText(f.Return))
	if !v.compact && v.visible(f.Call, f.Call) {
		l.labels = append(l.labels, label{x: x0, text: "failover in progress, " + msText(f.Return-f.Call)})
	}
	if !v.visible(f.Return, f.Return) {
		return
	}
	xp := v.x(f.Return)
	what := "Sentinel promoted a replica"
	if f.Detail != "" {
		what = f.Detail
	}
	fmt.Fprintf(&l.shapes, `<line class="promotion" x1="%.1f" x2="%.1f" y1="-2" y2="%.0f" stroke="#a0307f" stroke-width="3"><title>%s, at %s</title></line>`,
		xp, xp, bh+2, esc(what), msText(f.Return))
	if !v.compact {
		l.labels = append(l.labels, label{x: xp, text: fmt.Sprintf("%s: %s", msText(f.Return), what)})
	}
}

// drawNodeHolds draws, in the lane of lock node node, the spans in which it
// held the key for each client, in the client's colour, and its refusals
// as ticks under them.
func (s *scene) drawNodeHolds(l *lane, node int, v view) {
	bh := v.barHeight()
	for _, h := range s.nodeHolds[node] {
		if !v.visible(h.from, h.to) {
			continue
		}
		x0, x1 := v.clampX(h.from), v.clampX(h.to)
		fmt.Fprintf(&l.shapes, `<rect class="node-hold" data-client="%d" x="%.1f" y="0" width="%.1f" height="%.0f" fill="%s"><title>node %d holds the lock for client %d, %s–%s (%s)</title></rect>`,
			h.client, x0, math.Max(x1-x0, 1), bh, clientColour(h.client), node, h.client, msText(h.from), msText(h.to), esc(h.ended))
		if !v.compact && x1-x0 >= 16 {
			fmt.Fprintf(&l.shapes, `<text class="node-hold-client" x="%.1f" y="%.0f" font-size="9" fill="#fff">c%d</text>`, x0+2, bh-3, h.client)
		}
		if h.lost && v.visible(h.to, h.to) {
			fmt.Fprintf(&l.shapes, `<line class="lost" x1="%.1f" x2="%.1f" y1="-2" y2="%.0f" stroke="#c00" stroke-width="2"><title>node %d no longer held it for client %d at %s: %s</title></line>`,
				x1, x1, bh+2, node, h.client, msText(h.to), esc(h.ended))
		}
	}
	// One path per client, one tick per unit of width, as in client lanes.
	paths := map[int]*bytes.Buffer{}
	drawn := map[[2]int]bool{}
	counts := map[int]int{}
	var clients []int
	for _, t := range s.nodeTicks[node] {
		counts[t.client]++
		if !v.visible(t.at, t.at) || drawn[[2]int{t.client, int(v.x(t.at))}] {
			continue
		}
		drawn[[2]int{t.client, int(v.x(t.at))}] = true
		if paths[t.client] == nil {
			paths[t.client] = &bytes.Buffer{}
			clients = append(clients, t.client)
		}
		fmt.Fprintf(paths[t.client], "M%d %.0fv4", int(v.x(t.at)), bh+1)
	}
	slices.Sort(clients)
	for _, c := range clients {
		fmt.Fprintf(&l.shapes, `<path class="node-refused" d="%s" stroke="%s" stroke-width="1.5"><title>node %d refused client %d %d times</title></path>`,
			paths[c].String(), clientColour(c), node, c, counts[c])
	}
}

func detailSuffix(f history.Op) string {
	if f.Detail == "" {
		return ""
	}
	return " (" + f.Detail + ")"
}

// axis draws the time axis in ms under a view, with light grid lines up
// through its lanes, and returns the height below it.
func axis(out *bytes.Buffer, y float64, v view) float64 {
	span := v.to - v.from
	step := NiceStep(span, 10)
	fmt.Fprintf(out, `<g class="axis"><line x1="%d" x2="%d" y1="%.0f" y2="%.0f" stroke="#333"/>`, laneLabelW, Width-rightPad, y, y)
	for t := (v.from + step - 1) / step * step; t <= v.to; t += step {
		xt := v.x(t)
		fmt.Fprintf(out, `<line x1="%.1f" x2="%.1f" y1="20" y2="%.0f" stroke="#000" stroke-opacity="0.07"/>`, xt, xt, y)
		fmt.Fprintf(out, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#333"/>`, xt, xt, y, y+4)
		fmt.Fprintf(out, `<text x="%.1f" y="%.0f" text-anchor="middle" font-size="10">%s</text>`, xt, y+14, msText(t))
	}
	out.WriteString("</g>")
	return y + 20
}

// NiceStep is a step of 1, 2 or 5 times a power of ten milliseconds that
// cuts span into at most n parts: the ticks of a time axis.
func NiceStep(span time.Duration, n int) time.Duration {
	step := time.Millisecond
	for {
		for _, m := range []time.Duration{1, 2, 5} {
			if span/(step*m) <= time.Duration(n) {
				return step * m
			}
		}
		step *= 10
	}
}

// layout puts each label in the first row where it does not overlap the
// label before it, and returns each label's row, or -1 when it found no
// room within maxRows.
func layout(labels []label, right float64) []int {
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case labels[a].x < labels[b].x:
			return -1
		case labels[a].x > labels[b].x:
			return 1
		}
		return 0
	})
	rows := make([]int, len(labels))
	var ends []float64
	for _, i := range order {
		lb := labels[i]
		x0 := math.Min(lb.x, right-textW(lb.text))
		rows[i] = -1
		for r := range maxRows {
			if r == len(ends) {
				ends = append(ends, math.Inf(-1))
			}
			if ends[r] <= x0 {
				rows[i], ends[r] = r, x0+textW(lb.text)+6
				break
			}
		}
	}
	return rows
}

func textW(s string) float64 { return float64(len([]rune(s))) * charW }

func (s *scene) markClass() string {
	if s.lesson() {
		return "lesson"
	}
	return "violation"
}

func (s *scene) stuckWords() string {
	k := s.stuck
	who := "nobody gets the lock again"
	if k.holder >= 0 {
		who = fmt.Sprintf("held by client %d from %s, never again free", k.holder, msText(k.from))
	}
	if e := s.end; e != nil && e.Held && !e.Expires {
		who += "; the servers hold it with no expiry"
	}
	return fmt.Sprintf("%s; %d acquires refused", who, k.refused)
}

func clientAttr(l *lane) string {
	if l.class != "client-lane" {
		return ""
	}
	return fmt.Sprintf(` data-client="%d"`, l.client)
}

func fillOf(class string) string {
	switch class {
	case "bad", "violation":
		return ` fill="#a00" font-weight="bold"`
	case "warn":
		return ` fill="#8a4b00"`
	case "good", "lesson":
		return ` fill="#1a7f37" font-weight="bold"`
	}
	return ""
}

func esc(s string) string { return html.EscapeString(s) }
