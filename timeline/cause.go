package timeline

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// frees reports whether a fault can free a lock on its server by itself
// (a restart, a failover, a clock jump, an eviction, a killed session):
// a cause of a second holder, not only a stall of the first.
func frees(f history.Op) bool { return f.Effect == history.EffectLoss }

// cause is the step that let b in while a held the lock: what freed a's
// hold on the server, taken from the recorded events, in the order of the
// evidence they give. A lock node's reply that removed a's key (another
// client's late DEL or compare-and-delete, an acquire's cleanup) or took
// it over (GETSET, a plain SET) says it outright; then a release that was
// still under way when a got the lock and ended the releasing client's own
// hold (a DEL of someone else's lock, where no reply is recorded); then a
// fault that frees a lock on its server; then a's lease running out, after
// its last recorded take or renewal; and a lock that refused no acquire in
// the whole run excludes nothing. It reports false when no recorded event
// explains the overlap: the story then names no cause rather than guess.
func (s *scene) cause(a, b check.Hold) (Event, bool) {
	finders := []func(a, b check.Hold) (Event, bool){s.replyCause, s.requestCause, s.faultCause, s.releaseCause, s.grantCause, s.expiryCause, s.serverExpiryCause}
	for _, find := range finders {
		if e, ok := find(a, b); ok {
			e.Cause, e.priority = true, 9
			return e, true
		}
	}
	return Event{}, false
}

// replyCause is the last reply of a lock node, to a client other than a's,
// that removed or took over a's key after a got it and before b did.
func (s *scene) replyCause(a, b check.Hold) (Event, bool) {
	for _, r := range slices.Backward(s.replies) {
		if r.Client == a.Client || r.Key != a.Key || r.Outcome != models.OK || r.Call > b.Start || history.Returned(r, s.last) < a.Start {
			continue
		}
		// Only a plain DEL removes whatever key is there: a script's
		// compare-and-delete that said yes removed its sender's own.
		name, _, _ := strings.Cut(r.Command, " ")
		at := clamp(r.Call, a.Start, b.Start)
		switch {
		case (name == "DEL" || name == "UNLINK") && r.Phase == "release":
			return Event{At: at, Client: r.Client, Step: StepRelease,
				Text: fmt.Sprintf("client %d's late release: its %s, sent at %s, deletes client %d's key", r.Client, name, msText(r.Call), a.Client)}, true
		case name == "DEL" || name == "UNLINK":
			return Event{At: at, Client: r.Client, Step: StepRelease,
				Text: fmt.Sprintf("client %d's %s (%s, sent at %s) deletes client %d's key", r.Client, name, phaseWord(r.Phase), msText(r.Call), a.Client)}, true
		case name == "GETSET" || roleOf(r, false) == roleTake && name == "SET" && !strings.Contains(r.Command, "NX"):
			return Event{At: at, Client: r.Client, Step: StepRelease,
				Text: fmt.Sprintf("client %d's %s (%s) takes client %d's key over", r.Client, r.Command, phaseWord(r.Phase), a.Client)}, true
		}
	}
	return Event{}, false
}

// releaseCause is a release by another client that was under way after a
// got the lock, began before b got it, and ended that client's own hold:
// it freed a lock it no longer held, a's.
func (s *scene) releaseCause(a, b check.Hold) (Event, bool) {
	r, _, ok := s.culprit(a, b)
	// A release sent before a got the lock, and not held up on its way,
	// is the handover that let a in, not a late release.
	late := ok && (r.Call >= a.Start || slices.ContainsFunc(s.hatched[r.Client], func(f history.Op) bool {
		return f.Call <= r.Return && f.Return >= r.Call
	}))
	if !late || slices.ContainsFunc(s.replies, func(x history.Op) bool {
		return x.Client == r.Client && x.Call >= r.Call && x.Call <= r.Return
	}) {
		// The release's own commands are recorded: replyCause has told
		// whether one of them freed a's lock, and none did.
		return Event{}, false
	}
	return Event{At: clamp(r.Return, a.Start, b.Start), Client: r.Client, Step: StepRelease,
		Text: fmt.Sprintf("client %d's late release (sent at %s) deletes client %d's lock", r.Client, msText(r.Call), a.Client)}, true
}

// faultCause is the latest fault that frees a lock on its server, striking
// a's client or the system, after a got the lock and before b did.
func (s *scene) faultCause(a, b check.Hold) (Event, bool) {
	var found *Event
	for _, f := range s.losses {
		if f.Call > b.Start || f.Return < a.Start || (f.Client >= 0 && f.Client != a.Client) {
			continue
		}
		// A failover loses the lock when Sentinel promotes the replica, a
		// restart when the node serves again, empty.
		at, text := f.Call, shortLabel(f)
		if f.Part == history.PartFailover || f.Part == history.PartRestart {
			at = f.Return
		}
		if f.Part == history.PartFailover && f.Detail != "" {
			text = f.Detail
		}
		if at = clamp(at, a.Start, b.Start); found == nil || at >= found.At {
			found = &Event{At: at, Client: -1, Step: StepFault,
				Text: fmt.Sprintf("%s: client %d's lock is lost with it", text, a.Client)}
		}
	}
	if found == nil {
		return Event{}, false
	}
	return *found, true
}

// expiryCause is a's lease running out on the server before b got the
// lock. The server ran the command that took or last renewed the key no
// earlier than that command was sent, so the lease could end as early as
// ttl after it: the take's reply, else the acquire's Took, else the
// acquire's return, and a later renewal a node's reply recorded.
func (s *scene) expiryCause(a, b check.Hold) (Event, bool) {
	ttl := s.ttl()
	if ttl <= 0 {
		return Event{}, false
	}
	from, what := a.Start, "its acquire returned"
	for _, op := range s.acquired {
		if op.Client == a.Client && op.Key == a.Key && op.Return == a.Start && op.Took > 0 {
			from, what = op.Took, "the command that took it was sent"
		}
	}
	for _, r := range s.replies {
		if r.Client != a.Client || r.Key != a.Key || r.Outcome != models.OK || r.Call >= b.Start {
			continue
		}
		switch role := roleOf(r, false); {
		case role == roleTake && r.Call <= a.Start && r.Call >= from-ttl:
			from, what = r.Call, "its "+r.Command+" was sent"
		case role == roleRenew && r.Call >= a.Start:
			from, what = r.Call, "its last renewal ("+r.Command+") was sent"
		}
	}
	end := from + ttl
	if end > b.Start {
		return Event{}, false
	}
	text := fmt.Sprintf("client %d's lease runs out on the server, %s after %s", a.Client, msText(ttl), what)
	if r, ok := s.cleanup(a, b, end); ok {
		verb := "deletes"
		if r.Command == "UPDATE" {
			verb = "takes over"
		}
		return Event{At: r.Call, Client: r.Client, Step: StepRelease,
			Text: fmt.Sprintf("%s; client %d's cleanup %s, sent at %s in its acquire, %s the expired lock", text, r.Client, r.Command, msText(r.Call), verb)}, true
	}
	return Event{At: clamp(end, a.Start, b.Start), Client: -1, Step: StepExpire, Text: text}, true
}

// grantCause is a lock that never kept a client out for another
// client's hold: no acquire in the whole run was refused while only other
// clients held the lock (a refusal while the asker held it itself, a
// nested acquire, does not count). Nothing had to free a's hold: the lock
// let b in as it lets everyone in.
func (s *scene) grantCause(a, b check.Hold) (Event, bool) {
	for client, refused := range s.refused {
		for _, t := range refused {
			if slices.ContainsFunc(s.holds, func(h check.Hold) bool { return h.Client != client && h.Start <= t && t <= h.End }) {
				return Event{}, false
			}
		}
	}
	return Event{At: b.Start, Client: b.Client, Step: StepRefused,
		Text: fmt.Sprintf("the lock never refuses a client for another's hold: client %d's hold keeps no one out", a.Client)}, true
}

// serverExpiryCause is a's key gone from the server before its lease,
// by the client's reckoning, ran out: b's take was granted, so the key
// was free, and no recorded reply, request or fault removed it. The
// server ended it by its own clock (memcached's whole seconds).
func (s *scene) serverExpiryCause(a, b check.Hold) (Event, bool) {
	if s.ttl() <= 0 || len(s.requests)+len(s.replies) == 0 {
		return Event{}, false
	}
	return Event{At: b.Start, Client: -1, Step: StepExpire,
		Text: fmt.Sprintf("nothing recorded removed client %d's key, yet the server let client %d take it %s after client %d did, within the run's TTL of %s: the server expired it by its own clock",
			a.Client, b.Client, msText(b.Start-a.Start), a.Client, msText(s.ttl()))}, true
}

// requestCause is the last release of a client other than a's whose
// DELETE (memcached's, a SQL row's) the server said yes to, sent after a
// got the lock and before b did: a late release that deleted a's key. An
// acquire's DELETE is a cleanup, told with the expiry it follows, and
// etcd's DeleteRange removes only its sender's own key.
func (s *scene) requestCause(a, b check.Hold) (Event, bool) {
	for _, r := range slices.Backward(s.requests) {
		if r.Client == a.Client || r.Key != a.Key || r.Outcome != models.OK || r.Call < a.Start || r.Call > b.Start {
			continue
		}
		if r.Command == "DELETE" && r.Phase == "release" {
			return Event{At: r.Call, Client: r.Client, Step: StepRelease,
				Text: fmt.Sprintf("client %d's late release: its DELETE, sent at %s after client %d took the lock, deletes client %d's key", r.Client, msText(r.Call), a.Client, a.Client)}, true
		}
	}
	return Event{}, false
}

// cleanup is a request in an acquire, of a client other than a's, that
// removed or took over a's expired row or key between its lease's end and
// b's acquire: a cleanup DELETE, a takeover UPDATE.
func (s *scene) cleanup(a, b check.Hold, end time.Duration) (history.Op, bool) {
	for _, r := range slices.Backward(s.requests) {
		if r.Client != a.Client && r.Key == a.Key && r.Outcome == models.OK && r.Phase == "acquire" && r.Call >= end && r.Call <= b.Start &&
			(r.Command == "DELETE" || r.Command == "UPDATE") {
			return r, true
		}
	}
	return history.Op{}, false
}

// phaseWord names the phase a command was sent in, for a cause.
func phaseWord(phase string) string {
	switch phase {
	case "release":
		return "its release"
	case "acquire":
		return "in its acquire"
	case "background":
		return "its background work"
	}
	return phase
}

func clamp(t, lo, hi time.Duration) time.Duration { return min(max(t, lo), hi) }

// CauseOf is the step of a story that let the second holder in, and false
// when the story names none.
func CauseOf(story []Event) (Event, bool) {
	i := slices.IndexFunc(story, func(e Event) bool { return e.Cause })
	if i < 0 {
		return Event{}, false
	}
	return story[i], true
}
