// Package watch draws a run's lanes as text while the run goes, for a
// projector: one row per client (its holds, the faults that stop it, its
// crash), a row of faults and a row that marks where two clients held the
// lock at once, as it appears, with a line for each fault and overlap. It
// is what `check -pitfall N -watch` shows.
//
// A [Live] is a history.Watcher: the run only hands it each operation, and
// it draws on a goroutine of its own at a bounded rate, so that watching
// changes neither the run's timing nor its verdicts. On a terminal each
// frame is drawn over the last, ten a second; elsewhere (a pipe, a CI log)
// the lanes are printed anew once a second and each event once, as plain
// lines.
package watch

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
)

// Rates of drawing: a terminal's frame, and a plain writer's lanes.
const (
	ttyEvery   = 100 * time.Millisecond
	plainEvery = time.Second
)

// ttyEvents is how many of the latest events a terminal's frame lists.
const ttyEvents = 6

// settle is how long an event waits before a plain writer prints it: a
// release called just before another client's acquire returned is told a
// moment after it, and must not be printed as an overlap meanwhile.
const settle = 50 * time.Millisecond

// ANSI sequences for a terminal.
const (
	red       = "\x1b[31m"
	yellow    = "\x1b[33m"
	reset     = "\x1b[0m"
	clearLine = "\x1b[K"
	clearDown = "\x1b[J"
)

// Live is the live view of one run. Start it, let the run tell it what
// happens (history.Watcher), then Stop it.
type Live struct {
	out   io.Writer
	title string
	tty   bool

	mu     sync.Mutex
	ops    []history.Op
	begun  []history.Op
	latest time.Duration // the latest time an operation told of
	seenAt time.Time     // when it was told
	ended  bool

	// Only the drawing goroutine, then Stop, touch these.
	drawn     int             // lines of the last frame, drawn over on a terminal
	printed   map[string]bool // events printed on a plain writer
	lanesDrew time.Time       // when a plain writer last printed the lanes

	stop, done chan struct{}
}

// Start draws a live view titled title on out until Stop; tty says out is
// a terminal, where frames are drawn over each other.
func Start(out io.Writer, title string, tty bool) *Live {
	l := &Live{out: out, title: title, tty: tty, printed: map[string]bool{}, lanesDrew: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	go l.loop()
	return l
}

// Began tells the view that op has begun (history.Watcher).
func (l *Live) Began(op history.Op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.begun = append(l.begun, op)
	l.saw(op.Call)
}

// Recorded tells the view that op was recorded (history.Watcher).
func (l *Live) Recorded(op history.Op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, b := range l.begun {
		if b.Client == op.Client && b.Kind == op.Kind && b.Call == op.Call {
			l.begun = append(l.begun[:i], l.begun[i+1:]...)
			break
		}
	}
	l.ops = append(l.ops, op)
	l.ended = l.ended || op.Kind == history.KindEnd
	l.saw(max(op.Call, op.Return))
}

// saw notes the run's clock as an operation told it; the caller holds mu.
func (l *Live) saw(t time.Duration) {
	if t >= l.latest {
		l.latest, l.seenAt = t, time.Now()
	}
}

// Stop stops drawing and draws the last frame: the whole run once it
// ended. A view told nothing (a run that could not start) draws nothing.
func (l *Live) Stop() {
	close(l.stop)
	<-l.done
	l.draw(true)
}

// loop draws until Stop, at the rate of out's kind.
func (l *Live) loop() {
	defer close(l.done)
	t := time.NewTicker(ttyEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.draw(false)
		}
	}
}

// moment is what the view was told so far, and the run's clock now: the
// latest time told, plus the time since.
func (l *Live) moment() (moment, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// ops only grows, so its first len(ops) elements never change: the
	// frame shares them rather than copy thousands of operations while
	// the run waits on mu. begun changes in place, and is short.
	m := moment{ops: slices.Clip(l.ops), begun: slices.Clone(l.begun), now: l.latest, ended: l.ended}
	if !l.ended && !l.seenAt.IsZero() {
		m.now += time.Since(l.seenAt)
	}
	return m, len(l.ops)+len(l.begun) > 0
}

// draw draws a frame; last says it is the final one.
func (l *Live) draw(last bool) {
	m, any := l.moment()
	if !any {
		return
	}
	p := newPicture(m)
	if l.tty {
		l.drawOver(p, m.ended)
		return
	}
	l.printEvents(p, last)
	if last || time.Since(l.lanesDrew) >= plainEvery {
		l.lanesDrew = time.Now()
		fmt.Fprintln(l.out, strings.Join(append([]string{l.header(p, m.ended)}, p.lanes()...), "\n"))
	}
}

// header names the run and its time.
func (l *Live) header(p picture, ended bool) string {
	if ended {
		return fmt.Sprintf("%s · ended at %s", l.title, seconds(p.now))
	}
	return fmt.Sprintf("%s · %s", l.title, seconds(p.now.Truncate(100*time.Millisecond)))
}

// drawOver draws p over the terminal's last frame: the lanes in colour,
// then the latest events.
func (l *Live) drawOver(p picture, ended bool) {
	lines := []string{l.header(p, ended)}
	for _, r := range p.lanes() {
		r = strings.ReplaceAll(r, string(cellOverlap), red+string(cellOverlap)+reset)
		r = strings.ReplaceAll(r, string(cellFault), yellow+string(cellFault)+reset)
		lines = append(lines, r)
	}
	for _, e := range latest(p.events, ttyEvents) {
		lines = append(lines, eventLine(e))
	}
	var b strings.Builder
	if l.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\r", l.drawn)
	}
	for _, line := range lines {
		b.WriteString(line + clearLine + "\n")
	}
	b.WriteString(clearDown)
	io.WriteString(l.out, b.String())
	l.drawn = len(lines)
}

// latest are the last n events, and the first overlap before them when it
// is older: the moment the lesson is about stays on the screen.
func latest(evs []event, n int) []event {
	if len(evs) <= n {
		return evs
	}
	first := slices.IndexFunc(evs, func(e event) bool { return strings.HasPrefix(e.key, "overlap ") })
	if first < 0 || first >= len(evs)-n {
		return evs[len(evs)-n:]
	}
	return append([]event{evs[first]}, evs[len(evs)-n+1:]...)
}

// printEvents prints, once each, the events a plain writer has not printed,
// those of the last settle only on the last frame.
func (l *Live) printEvents(p picture, last bool) {
	for _, e := range p.events {
		if l.printed[e.key] || (!last && e.at > p.now-settle) {
			continue
		}
		l.printed[e.key] = true
		fmt.Fprintln(l.out, eventLine(e))
	}
}

func eventLine(e event) string { return fmt.Sprintf("  %9s  %s", seconds(e.at), e.text) }
