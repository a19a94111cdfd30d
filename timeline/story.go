package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Step says what kind of thing an Event is, which picks how the sequence
// diagram draws it.
type Step string

// Steps of a story.
const (
	StepAcquire Step = "acquire" // a client got the lock
	StepRefused Step = "refused" // a client asked for the lock and was refused
	StepRelease Step = "release" // a client released (or deleted) the lock
	StepPause   Step = "pause"   // a client stopped: a pause or slow work
	StepExpire  Step = "expire"  // a lease ran out
	StepGrant   Step = "grant"   // the lock let a client in that it never keeps out
	StepFault   Step = "fault"   // a fault of a node, Sentinel or the network
	StepCrash   Step = "crash"   // a client crashed
	StepRead    Step = "read"    // a critical section read the stock
	StepWrite   Step = "write"   // a critical section wrote the stock
	StepEnd     Step = "end"     // what the run found at its end
)

// Event is one step of the story of a run's first violation, taken from its
// history.
type Event struct {
	At     time.Duration
	Client int // who did it; -1 for the system
	Step   Step
	Text   string
	// Violation marks the step that breaks the rule; Lesson marks one where
	// a fix did its job (the resource refusing a stale token).
	Violation, Lesson bool
	// Cause marks the step that let a second holder in: what freed the
	// first holder's lock on the server (a late release, a takeover, a
	// fault that loses the lock, the lease running out).
	Cause bool
	// priority decides which steps stay when a story is too long.
	priority int
}

// MaxEvents is the most steps a story tells: enough for the longest
// counterexample of the catalogue, few enough to read at a glance.
const MaxEvents = 8

// Story is the first violation of a run told in at most MaxEvents steps, in
// order: who took the lock, what struck, whose lease ran out, who took it
// while another held it, and for a lost write both reads and both writes.
// A run without a failing verdict has no story.
func Story(ops []history.Op, checks []checker.Check) []Event {
	return newScene(ops, checks).story()
}

func (s *scene) story() []Event {
	var ev []Event
	switch {
	case s.overlap != nil:
		ev = s.overlapStory()
	case s.stuck != nil:
		ev = s.stuckStory()
	case len(s.idle) > 0:
		ev = s.idleStory()
	}
	switch {
	case s.lost != nil:
		a, b := s.lost.a, s.lost.b
		first, second := a, b
		if b.Call < a.Call {
			first, second = b, a
		}
		ev = append(ev,
			Event{At: first.Call, Client: first.Client, Step: StepRead, Text: fmt.Sprintf("client %d reads stock %d", first.Client, first.Observed), priority: 5},
			Event{At: second.Call, Client: second.Client, Step: StepRead, Text: fmt.Sprintf("client %d reads stock %d too", second.Client, second.Observed), priority: 5},
			Event{At: a.Return, Client: a.Client, Step: StepWrite, Text: fmt.Sprintf("client %d writes %d", a.Client, a.Written), priority: 5},
			Event{At: b.Return, Client: b.Client, Step: StepWrite, Violation: true, priority: 9,
				Text: fmt.Sprintf("client %d writes %d: two sales, one decrement, a write lost", b.Client, b.Written)})
	case s.refusal != nil && (s.overlap != nil || s.checks[checker.CheckLock].Verdict == checker.Illegal):
		r := s.refusal
		for _, op := range s.sections {
			if op.Token == r.newer && op.Result == models.Wrote {
				ev = append(ev, Event{At: op.Return, Client: op.Client, Step: StepWrite, priority: 7,
					Text: fmt.Sprintf("client %d writes with token %d", op.Client, op.Token)})
				break
			}
		}
		ev = append(ev, Event{At: r.section.Return, Client: r.section.Client, Step: StepWrite, Lesson: true, priority: 9,
			Text: fmt.Sprintf("client %d writes with token %d: the resource refuses it, it saw token %d", r.section.Client, r.section.Token, r.newer)})
	}
	slices.SortStableFunc(ev, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	for len(ev) > MaxEvents {
		drop := 0
		for i, e := range ev {
			if e.priority < ev[drop].priority {
				drop = i
			}
		}
		ev = slices.Delete(ev, drop, drop+1)
	}
	return ev
}

// overlapStory tells how a second client came to hold the lock: the
// earlier holder's acquire, what struck it, what freed its lock on the
// server (the cause: a late release, a takeover, a fault, its lease
// running out), and the second acquire. When a third client's late
// release freed the lock, that client's own hold comes first.
func (s *scene) overlapStory() []Event {
	a, b := s.overlap.a, s.overlap.b
	var ev []Event
	acquire := func(h checker.Hold, pri int) {
		ev = append(ev, Event{At: h.Start, Client: h.Client, Step: StepAcquire, priority: pri,
			Text: fmt.Sprintf("client %d acquires the lock%s", h.Client, s.tokenOf(h))})
	}
	cause, ended, caused := s.cause(a, b)
	struck := func(h checker.Hold, until time.Duration) {
		for _, f := range s.faultsDuring(h.Client, h.Start, until, 3) {
			if !caused || f.At != cause.At || f.Step != cause.Step {
				ev = append(ev, f)
			}
		}
		if ttl := s.ttl(); ttl > 0 && h.Start+ttl < until && (!caused || cause.Step != StepExpire) {
			ev = append(ev, Event{At: h.Start + ttl, Client: -1, Step: StepExpire, priority: 6,
				Text: fmt.Sprintf("client %d's lease ends (TTL %s) unless renewed", h.Client, msText(ttl))})
		}
	}
	if ended != nil {
		acquire(*ended, 7)
		struck(*ended, cause.At)
		acquire(a, 8)
	} else {
		acquire(a, 8)
		struck(a, b.Start)
	}
	if caused {
		ev = append(ev, cause)
	}
	// What held the second client up on its way to the lock: an acquire
	// whose reply came late, when the key it set may have long expired.
	for _, f := range s.faultsDuring(b.Client, s.lastHoldEnd(b), b.Start, 2) {
		if f.Client == b.Client && f.Client != a.Client {
			ev = append(ev, f)
		}
	}
	ev = append(ev, Event{At: b.Start, Client: b.Client, Step: StepAcquire, Violation: !s.lesson(), Lesson: s.lesson(), priority: 10,
		Text: fmt.Sprintf("client %d acquires the lock%s while client %d holds it", b.Client, s.tokenOf(b), a.Client)})
	if a.EndedBy == history.KindRelease && a.End < b.End {
		ev = append(ev, Event{At: a.End, Client: a.Client, Step: StepRelease, priority: 3,
			Text: fmt.Sprintf("client %d releases, never knowing it had lost the lock", a.Client)})
	}
	return ev
}

// faultsDuring are up to n faults that struck client, or the whole system,
// between from and to, as story steps.
func (s *scene) faultsDuring(client int, from, to time.Duration, n int) []Event {
	var ev []Event
	for _, f := range s.hatched[client] {
		if f.Call <= to && f.Return >= from && f.Return-f.Call >= 10*time.Millisecond {
			ev = append(ev, Event{At: f.Call, Client: client, Step: StepPause, priority: 7,
				Text: fmt.Sprintf("client %d %s for %s", client, pauseWords(f), msText(f.Return-f.Call))})
		}
	}
	for _, lane := range s.lanes {
		for _, f := range s.faults[lane] {
			if f.Call > to || f.Return < from {
				continue
			}
			at, text := f.Call, shortLabel(f)
			if f.Part == history.PartFailover {
				// Told when the promotion happened, not when the
				// failover began: the kill of the master says that.
				at, text = f.Return, "Sentinel failover in progress"
				switch {
				case f.Return > to:
					at = f.Call
				case f.Detail != "":
					text = f.Detail
				default:
					text = "Sentinel promotes a replica"
				}
			}
			if !slices.ContainsFunc(ev, func(e Event) bool { return e.At == at && e.Step == StepFault }) {
				ev = append(ev, Event{At: at, Client: -1, Step: StepFault, Text: text, priority: 7})
			}
		}
	}
	slices.SortFunc(ev, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	if len(ev) > n {
		ev = ev[len(ev)-n:]
	}
	return ev
}

// pauseWords says what a client's own fault did to it, by its kind.
func pauseWords(f history.Op) string {
	if f.Part == "" {
		switch f.FaultKind {
		case "slow-work":
			return "works slowly"
		case "pause":
			return "is paused (stop-the-world)"
		case "command-delay":
			return "waits for a delayed command's reply"
		}
	}
	return shortLabel(f)
}

func (s *scene) stuckStory() []Event {
	k := s.stuck
	var ev []Event
	for _, h := range s.holds {
		if h.Client == k.holder && h.Start <= k.from {
			ev = ev[:0]
			ev = append(ev, Event{At: h.Start, Client: h.Client, Step: StepAcquire, priority: 6,
				Text: fmt.Sprintf("client %d acquires the lock", h.Client)})
		}
	}
	for _, c := range s.crashes {
		if c.Client == k.holder && c.Call >= k.from {
			text := fmt.Sprintf("client %d crashes", c.Client)
			if c.Detail != "" {
				text += " (" + c.Detail + ")"
			}
			ev = append(ev, Event{At: c.Call, Client: c.Client, Step: StepCrash, Text: text, priority: 7})
			break
		}
	}
	// The holder asking for its own lock (a nested acquire) comes first,
	// then the first other client refused, then how many were.
	var own, other, last *Event
	for _, client := range s.clients {
		for _, t := range s.refused[client] {
			if t <= k.from {
				continue
			}
			e := &Event{At: t, Client: client, Step: StepRefused, priority: 5,
				Text: fmt.Sprintf("client %d asks for the lock: refused", client)}
			switch {
			case client == k.holder && (own == nil || t < own.At):
				e.Text = fmt.Sprintf("client %d asks for the lock it holds: refused", client)
				own = e
			case client != k.holder && (other == nil || t < other.At):
				other = e
			}
			if last == nil || t > last.At {
				last = &Event{At: t, Client: client, Step: StepRefused, priority: 4,
					Text: fmt.Sprintf("%d acquires refused since %s", k.refused, msText(k.from))}
			}
		}
	}
	for _, e := range []*Event{own, other, last} {
		if e != nil {
			ev = append(ev, *e)
		}
	}
	if e := s.end; e != nil {
		var why []string
		switch {
		case !e.Held:
			why = append(why, "the servers hold the lock for nobody")
		case !e.Expires:
			why = append(why, "the servers still hold the lock, with no expiry")
		default:
			why = append(why, fmt.Sprintf("the servers still hold the lock, for %s more", msText(e.Left)))
		}
		if !e.Probe {
			why = append(why, fmt.Sprintf("a fresh client gets no lock within %s", msText(e.Bound)))
		}
		ev = append(ev, Event{At: s.endAt(), Client: -1, Step: StepEnd, Violation: true, priority: 10,
			Text: "the run ends: " + strings.Join(why, "; ")})
	}
	return ev
}

func (s *scene) idleStory() []Event {
	g := s.idle[0]
	var ev []Event
	for _, h := range s.holds {
		if h.End == g.from && h.EndedBy == history.KindRelease {
			ev = append(ev,
				Event{At: h.Start, Client: h.Client, Step: StepAcquire, priority: 6, Text: fmt.Sprintf("client %d acquires the lock", h.Client)},
				Event{At: h.End, Client: h.Client, Step: StepRelease, priority: 7, Text: fmt.Sprintf("client %d is done, but the lock stays taken", h.Client)})
			break
		}
	}
	for _, t := range s.refused[g.next] {
		if t > g.from && t < g.to {
			ev = append(ev, Event{At: t, Client: g.next, Step: StepRefused, priority: 5, Text: fmt.Sprintf("client %d asks for the lock: refused", g.next)})
			break
		}
	}
	ev = append(ev, Event{At: g.to, Client: g.next, Step: StepAcquire, Violation: true, priority: 10,
		Text: fmt.Sprintf("client %d acquires the lock after it sat idle %s", g.next, msText(g.to-g.from))})
	return ev
}

// tokenOf is " (token N)" for a hold whose acquire returned a fencing
// token, or "".
func (s *scene) tokenOf(h checker.Hold) string {
	for _, op := range s.sections {
		if op.Client == h.Client && op.Call >= h.Start && op.Call <= h.End && op.Token != 0 {
			return fmt.Sprintf(" (token %d)", op.Token)
		}
	}
	return ""
}

func (s *scene) ttl() time.Duration {
	if s.end == nil {
		return 0
	}
	return s.end.TTL
}

// endAt is when the run's end record was written, or the end of the history.
func (s *scene) endAt() time.Duration {
	if s.endRecord > 0 {
		return s.endRecord
	}
	return s.last
}

// lastHoldEnd is when h's client last gave the lock up before h, or 0.
func (s *scene) lastHoldEnd(h checker.Hold) time.Duration {
	var end time.Duration
	for _, o := range s.holds {
		if o.Client == h.Client && o.End <= h.Start {
			end = max(end, o.End)
		}
	}
	return end
}
