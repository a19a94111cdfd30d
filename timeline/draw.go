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

	"github.com/locklab/locklab/check"
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
func Draw(ops []history.Op, checks []check.Check) []byte {
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

// view draws v at height y and returns the height below it.
func (s *scene) view(out *bytes.Buffer, y float64, v view) float64 {
	x := func(t time.Duration) float64 {
		return laneLabelW + float64(t-v.from)/float64(max(v.to-v.from, 1))*(Width-laneLabelW-rightPad)
	}
	visible := func(a, b time.Duration) bool { return b >= v.from && a <= v.to }
	clampX := func(t time.Duration) float64 { return math.Max(laneLabelW, math.Min(Width-rightPad, x(t))) }
	cls := "detail"
	if v.compact {
		cls = "overview"
	}
	fmt.Fprintf(out, `<g class="view %s" transform="translate(0 %.0f)">`, cls, y)
	fmt.Fprintf(out, `<text x="4" y="12" font-weight="bold">%s</text>`, esc(v.title))
	top := 20.0

	var lanes []*lane
	clientLane := map[int]*lane{}
	for _, c := range s.clients {
		l := &lane{name: fmt.Sprintf("client %d", c), class: "client-lane", client: c}
		if n := len(s.refused[c]); n > 0 && !v.compact {
			l.note = fmt.Sprintf("%d refused", n)
		}
		lanes = append(lanes, l)
		clientLane[c] = l
	}
	key := &lane{name: "lock key", class: "key-lane", client: -1}
	lanes = append(lanes, key)
	for _, name := range s.lanes {
		if name == "network" {
			continue
		}
		lanes = append(lanes, s.faultLane(name, v, x, visible, clampX))
	}
	lanes = append(lanes, s.faultLane("network", v, x, visible, clampX))

	bh := float64(barH)
	if v.compact {
		bh = compactH
	}
	ttl := s.ttl()
	story := map[[2]int64]bool{} // holds in the story get their lease end labelled
	if s.overlap != nil {
		for _, h := range []check.Hold{s.overlap.a, s.overlap.b} {
			story[[2]int64{int64(h.Client), int64(h.Start)}] = true
		}
		if _, h, ok := s.culprit(s.overlap.a, s.overlap.b); ok {
			story[[2]int64{int64(h.Client), int64(h.Start)}] = true
		}
	}
	for _, h := range s.holds {
		l := clientLane[h.Client]
		if l == nil || !visible(h.Start, h.End) {
			continue
		}
		x0, x1 := clampX(h.Start), clampX(h.End)
		fill := "#4a7bd0"
		if s.perNode() {
			fill = clientColour(h.Client) // as in the node lanes
		}
		fmt.Fprintf(&l.shapes, `<rect class="hold" x="%.1f" y="0" width="%.1f" height="%.0f" fill="%s"><title>client %d holds the lock %s–%s</title></rect>`,
			x0, math.Max(x1-x0, 1), bh, fill, h.Client, msText(h.Start), msText(h.End))
		inStory := story[[2]int64{int64(h.Client), int64(h.Start)}]
		if ttl > 0 && (h.Start+ttl < h.End || inStory) && visible(h.Start+ttl, h.Start+ttl) {
			xe := x(h.Start + ttl)
			fmt.Fprintf(&l.shapes, `<line class="lease-end" x1="%.1f" x2="%.1f" y1="-2" y2="%.0f" stroke="#b30000" stroke-width="2" stroke-dasharray="3 2"><title>client %d's lease ends at %s unless renewed (TTL %s)</title></line>`,
				xe, xe, bh+2, h.Client, msText(h.Start+ttl), msText(ttl))
			if !v.compact && inStory {
				l.labels = append(l.labels, label{x: xe, text: "lease end (TTL " + msText(ttl) + ")", class: "warn"})
			}
		}
	}
	for c, ts := range s.refused {
		l := clientLane[c]
		if l == nil {
			continue
		}
		// One tick per unit of width is all the eye can see, and one path
		// for all of them keeps a run of thousands of refusals small.
		drawn := map[int]bool{}
		var d bytes.Buffer
		for _, t := range ts {
			if !visible(t, t) || drawn[int(x(t))] {
				continue
			}
			drawn[int(x(t))] = true
			fmt.Fprintf(&d, "M%d %.0fv4", int(x(t)), bh+1)
		}
		if d.Len() > 0 {
			fmt.Fprintf(&l.shapes, `<path class="refused" d="%s" stroke="#777" stroke-width="1"><title>%d acquires refused</title></path>`, d.String(), len(ts))
		}
	}
	for c, fs := range s.hatched {
		l := clientLane[c]
		if l == nil {
			continue
		}
		for _, f := range fs {
			if !visible(f.Call, f.Return) {
				continue
			}
			x0, x1 := clampX(f.Call), clampX(f.Return)
			fmt.Fprintf(&l.shapes, `<rect class="pause" x="%.1f" y="0" width="%.1f" height="%.0f" fill="url(#hatch)" stroke="#b35900"><title>%s</title></rect>`,
				x0, math.Max(x1-x0, 2), bh, esc(shortLabel(f)+" "+msText(f.Return-f.Call)+": "+f.Detail))
			if !v.compact && f.Return-f.Call >= time.Millisecond {
				l.labels = append(l.labels, label{x: x0, text: shortLabel(f) + " " + msText(f.Return-f.Call)})
			}
		}
	}
	for _, c := range s.crashes {
		l := clientLane[c.Client]
		if l == nil || !visible(c.Call, c.Call) {
			continue
		}
		xc, m := x(c.Call), bh/2
		fmt.Fprintf(&l.shapes, `<g class="crash" stroke="#c00" stroke-width="2.5"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><title>client %d crashed at %s</title></g>`,
			xc-m, 0.0, xc+m, bh, xc-m, bh, xc+m, 0.0, c.Client, msText(c.Call))
		if !v.compact {
			l.labels = append(l.labels, label{x: xc - m, text: "crash", class: "bad"})
		}
	}
	if s.lost != nil && !v.compact {
		for _, op := range []history.Op{s.lost.a, s.lost.b} {
			l := clientLane[op.Client]
			if l == nil {
				continue
			}
			for _, p := range []struct {
				at   time.Duration
				text string
			}{{op.Call, fmt.Sprintf("read %d", op.Observed)}, {op.Return, fmt.Sprintf("wrote %d", op.Written)}} {
				if visible(p.at, p.at) {
					fmt.Fprintf(&l.shapes, `<circle class="lost-write" cx="%.1f" cy="%.1f" r="4" fill="#fff" stroke="#c00" stroke-width="2"/>`, x(p.at), bh/2)
					l.labels = append(l.labels, label{x: x(p.at) - 3, text: p.text, class: "bad"})
				}
			}
		}
	}
	if r := s.refusal; r != nil && !v.compact && visible(r.section.Return, r.section.Return) {
		if l := clientLane[r.section.Client]; l != nil {
			xr := x(r.section.Return)
			fmt.Fprintf(&l.shapes, `<circle class="refused-write" cx="%.1f" cy="%.1f" r="4" fill="#fff" stroke="#1a7f37" stroke-width="2"/>`, xr, bh/2)
			l.labels = append(l.labels, label{x: xr - 3, text: fmt.Sprintf("write with token %d refused", r.section.Token), class: "good"})
		}
	}

	// The lock key: an overlap, idle gaps, a key nobody gets again.
	if o := s.overlap; o != nil && visible(o.b.Start, o.to()) {
		fill := "#d62728"
		if s.lesson() {
			fill = "#1a7f37"
		}
		x0, x1 := clampX(o.b.Start), clampX(o.to())
		fmt.Fprintf(&key.shapes, `<rect x="%.1f" y="0" width="%.1f" height="%.0f" fill="%s"/>`, x0, math.Max(x1-x0, 2), bh, fill)
		if !v.compact {
			key.labels = append(key.labels, label{x: x0, text: fmt.Sprintf("clients %d and %d both hold it (%s)", o.a.Client, o.b.Client, msText(o.to()-o.b.Start)), class: s.markClass()})
		}
	}
	for _, g := range s.idle {
		if !visible(g.from, g.to) {
			continue
		}
		x0, x1 := clampX(g.from), clampX(g.to)
		fmt.Fprintf(&key.shapes, `<rect class="idle" x="%.1f" y="0" width="%.1f" height="%.0f" fill="url(#idle)" stroke="#e08a00"><title>free for %s while client %d waited</title></rect>`,
			x0, math.Max(x1-x0, 1), bh, msText(g.to-g.from), g.next)
		if !v.compact {
			key.labels = append(key.labels, label{x: x0, text: "idle " + msText(g.to-g.from), class: "warn"})
		}
	}
	if k := s.stuck; k != nil && visible(k.from, s.last) {
		x0, x1 := clampX(k.from), clampX(s.last)
		fmt.Fprintf(&key.shapes, `<rect class="stuck violation" x="%.1f" y="0" width="%.1f" height="%.0f" fill="#9467bd"/>`, x0, math.Max(x1-x0, 2), bh)
		if !v.compact {
			key.labels = append(key.labels, label{x: x0, text: s.stuckWords(), class: "bad"})
		}
	}

	// Lay out: each lane's height follows its rows of labels.
	laneTop := map[*lane]float64{}
	laneBottom := map[*lane]float64{}
	for _, l := range lanes {
		rows := layout(l.labels, Width-rightPad)
		nrows := 0
		for _, r := range rows {
			nrows = max(nrows, r+1)
		}
		h := bh + 6
		if !v.compact {
			h = bh + 10 + float64(nrows)*rowH
			if nrows == 0 {
				h = bh + 10
			}
		}
		laneTop[l], laneBottom[l] = top, top+h
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
		top += h
	}

	// The first violation across the lanes of both clients.
	if o := s.overlap; o != nil && visible(o.b.Start, o.to()) {
		la, lb := clientLane[o.a.Client], clientLane[o.b.Client]
		if la != nil && lb != nil {
			y0 := math.Min(laneTop[la], laneTop[lb]) + 1
			y1 := math.Max(laneTop[la], laneTop[lb]) + bh + 5
			x0, x1 := clampX(o.b.Start), clampX(o.to())
			stroke, fill, dash := "#d62728", "#d62728", ""
			if s.lesson() {
				stroke, fill, dash = "#1a7f37", "#1a7f37", ` stroke-dasharray="5 3"`
			}
			fmt.Fprintf(out, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.22" stroke="%s" stroke-width="2"%s><title>clients %d and %d both held the lock from %s to %s</title></rect>`,
				s.markClass(), x0-1, y0, math.Max(x1-x0, 3)+2, y1-y0, fill, stroke, dash, o.a.Client, o.b.Client, msText(o.b.Start), msText(o.to()))
		}
	}
	if v.window[1] > 0 {
		x0, x1 := clampX(v.window[0]), clampX(v.window[1])
		fmt.Fprintf(out, `<rect class="window" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="none" stroke="#222" stroke-width="1.5" stroke-dasharray="4 2"/>`,
			x0, 18.0, math.Max(x1-x0, 3), top-16)
	}
	top = s.axis(out, top+4, v, x)
	out.WriteString("</g>")
	return y + top
}

// faultLane draws the faults of one node, Sentinel, the master, or the
// network; a lock node's lane also shows whom the node held the key for.
func (s *scene) faultLane(name string, v view, x func(time.Duration) float64, visible func(a, b time.Duration) bool, clampX func(time.Duration) float64) *lane {
	l := &lane{name: name, class: "fault-lane", client: -1}
	bh := float64(barH)
	if v.compact {
		bh = compactH
	}
	node, isNode := -1, false
	if n, err := strconv.Atoi(strings.TrimPrefix(name, "node ")); err == nil && strings.HasPrefix(name, "node ") {
		node, isNode = n, true
	}
	holds := isNode && (len(s.nodeHolds[node]) > 0 || len(s.nodeTicks[node]) > 0)
	if holds {
		l.class = "fault-lane node-lane"
		s.drawNodeHolds(l, node, v, x, visible, clampX, bh)
	}
	for _, f := range s.faults[name] {
		if !visible(f.Call, f.Return) {
			continue
		}
		x0, x1 := clampX(f.Call), clampX(f.Return)
		if f.Fault == history.FaultFailover {
			s.drawFailover(l, f, v, x, visible, x0, x1, bh)
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
func (s *scene) drawFailover(l *lane, f history.Op, v view, x func(time.Duration) float64, visible func(a, b time.Duration) bool, x0, x1, bh float64) {
	fmt.Fprintf(&l.shapes, `<rect class="fault failover" x="%.1f" y="0" width="%.1f" height="%.0f" fill="#e377c2" fill-opacity="0.35" stroke="#e377c2"><title>Sentinel failover in progress, %s–%s</title></rect>`,
		x0, math.Max(x1-x0, 3), bh, msText(f.Call), msText(f.Return))
	if !v.compact && visible(f.Call, f.Call) {
		l.labels = append(l.labels, label{x: x0, text: "failover in progress, " + msText(f.Return-f.Call)})
	}
	if !visible(f.Return, f.Return) {
		return
	}
	xp := x(f.Return)
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
func (s *scene) drawNodeHolds(l *lane, node int, v view, x func(time.Duration) float64, visible func(a, b time.Duration) bool, clampX func(time.Duration) float64, bh float64) {
	for _, h := range s.nodeHolds[node] {
		if !visible(h.from, h.to) {
			continue
		}
		x0, x1 := clampX(h.from), clampX(h.to)
		fmt.Fprintf(&l.shapes, `<rect class="node-hold" data-client="%d" x="%.1f" y="0" width="%.1f" height="%.0f" fill="%s"><title>node %d holds the lock for client %d, %s–%s (%s)</title></rect>`,
			h.client, x0, math.Max(x1-x0, 1), bh, clientColour(h.client), node, h.client, msText(h.from), msText(h.to), esc(h.ended))
		if !v.compact && x1-x0 >= 16 {
			fmt.Fprintf(&l.shapes, `<text class="node-hold-client" x="%.1f" y="%.0f" font-size="9" fill="#fff">c%d</text>`, x0+2, bh-3, h.client)
		}
		if h.lost && visible(h.to, h.to) {
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
		if !visible(t.at, t.at) || drawn[[2]int{t.client, int(x(t.at))}] {
			continue
		}
		drawn[[2]int{t.client, int(x(t.at))}] = true
		if paths[t.client] == nil {
			paths[t.client] = &bytes.Buffer{}
			clients = append(clients, t.client)
		}
		fmt.Fprintf(paths[t.client], "M%d %.0fv4", int(x(t.at)), bh+1)
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
func (s *scene) axis(out *bytes.Buffer, y float64, v view, x func(time.Duration) float64) float64 {
	span := v.to - v.from
	step := niceStep(span, 10)
	fmt.Fprintf(out, `<g class="axis"><line x1="%d" x2="%d" y1="%.0f" y2="%.0f" stroke="#333"/>`, laneLabelW, Width-rightPad, y, y)
	for t := (v.from + step - 1) / step * step; t <= v.to; t += step {
		xt := x(t)
		fmt.Fprintf(out, `<line x1="%.1f" x2="%.1f" y1="20" y2="%.0f" stroke="#000" stroke-opacity="0.07"/>`, xt, xt, y)
		fmt.Fprintf(out, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#333"/>`, xt, xt, y, y+4)
		fmt.Fprintf(out, `<text x="%.1f" y="%.0f" text-anchor="middle" font-size="10">%s</text>`, xt, y+14, msText(t))
	}
	out.WriteString("</g>")
	return y + 20
}

// niceStep is a step of 1, 2 or 5 times a power of ten milliseconds that
// cuts span into at most n parts.
func niceStep(span time.Duration, n int) time.Duration {
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
	if e := s.end; e != nil && e.KeyExists && e.PTTL < 0 {
		who += "; the key has no TTL"
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
