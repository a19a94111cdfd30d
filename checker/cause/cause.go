// Package cause finds what let a second holder in while the first held
// the lock, from a run's recorded events alone: a late release, a
// takeover, a fault that frees a lock, a lease that ran out, a lock that
// keeps nobody out. The run page's story and the workshop draw it.
package cause

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Kind says what a Cause is.
type Kind string

// Kinds of cause.
const (
	Release Kind = "release" // a client's command removed or took over the key: a late release, a cleanup, a takeover
	Fault   Kind = "fault"   // a fault that frees a lock on its server: a restart, a failover, a killed session
	Expiry  Kind = "expire"  // the first holder's lease ran out on the server
	Grant   Kind = "grant"   // the lock never keeps a client out for another's hold
)

// Cause is what let a second holder in while the first held the lock:
// when, who did it (-1 for the system), what kind of event, in words.
type Cause struct {
	At     time.Duration
	Client int
	Kind   Kind
	Text   string
	// Ended is the hold of a third client whose late release is the
	// cause: the hold its release ended, before the first holder's began.
	Ended *checker.Hold
}

// evidence is what of a history can tell a cause.
type evidence struct {
	last, ttl                 time.Duration
	holds                     []checker.Hold
	refused                   map[int][]time.Duration // refused acquires' returns, per client
	hatched                   map[int][]history.Op    // a client's own faults (a pause), per client
	releases, acquired        []history.Op            // the workload's releases (Return filled in), and its acquires that took the lock
	replies, requests, losses []history.Op            // lock nodes' replies, SQL/etcd/memcached requests, faults that free a lock
	server                    []history.Op            // the servers' events on the lock's nodes or keys (KindServer)
}

// Of finds, in ops, what freed a's hold on the server so that b got
// the lock while a held it, in the order of the evidence the recorded
// events give. A lock node's reply that removed a's key (a late DEL) or
// took it over (GETSET, a plain SET) says it outright, as does a late
// release's DELETE request (one that changed rows, when the server said);
// then the servers' own events: the node or key that held the lock
// deleted while a was not releasing it (ZooKeeper's session, etcd's
// lease at its end); then a fault that frees a lock on its server;
// then a release still under way when a got the lock, held up on its way
// and ending its client's own hold (a DEL of someone else's lock, where no
// reply is recorded); a lock that never refuses for another's hold; a's
// lease running out after its last recorded take or renewal (with the
// cleanup that removed the expired lock); a statement of another client's
// acquire that changed a's row while a's lease ran; and a key the server granted b
// before a's lease ran out with nothing recorded removing it, which the
// server's own clock expired. It reports false when no recorded event
// explains the overlap: better no cause than a guess.
func Of(ops []history.Op, a, b checker.Hold) (Cause, bool) {
	e := newEvidence(ops)
	for _, find := range []func(a, b checker.Hold) (Cause, bool){e.replyCause, e.requestCause, e.serverCause, e.faultCause, e.releaseCause, e.grantCause, e.expiryCause, e.rowsCause, e.serverExpiryCause} {
		if c, ok := find(a, b); ok {
			c.Ended = e.ended(a, b, c)
			return c, true
		}
	}
	return Cause{}, false
}

func newEvidence(ops []history.Op) *evidence {
	e := &evidence{last: history.Last(ops), refused: map[int][]time.Duration{}, hatched: map[int][]history.Op{}}
	if end := history.EndOf(ops); end != nil {
		e.ttl = end.TTL
	}
	probe := map[int]bool{}
	for _, op := range ops {
		probe[op.Client] = probe[op.Client] || op.Probe
	}
	for _, h := range checker.Holds(ops) {
		if !probe[h.Client] {
			e.holds = append(e.holds, h)
		}
	}
	for _, op := range ops {
		if probe[op.Client] && op.Client >= 0 {
			continue
		}
		switch op.Kind {
		case history.KindAcquire:
			if op.Outcome == models.Failed {
				e.refused[op.Client] = append(e.refused[op.Client], history.Returned(op, e.last))
			}
			if op.Outcome == models.OK {
				e.acquired = append(e.acquired, op)
			}
		case history.KindRelease:
			op.Return = history.Returned(op, e.last)
			e.releases = append(e.releases, op)
		case history.KindReply:
			e.replies = append(e.replies, op)
		case history.KindRequest:
			e.requests = append(e.requests, op)
		case history.KindServer:
			if op.Server != nil {
				e.server = append(e.server, op)
			}
		case history.KindFault:
			op.Return = history.Returned(op, e.last)
			if op.Effect == history.EffectLoss {
				e.losses = append(e.losses, op)
			}
			if op.Client >= 0 && (op.Target == nil || op.Target.Type != history.TargetLink) {
				e.hatched[op.Client] = append(e.hatched[op.Client], op)
			}
		}
	}
	return e
}

// replyCause is the last reply of a lock node, to a client other than a's,
// that removed or took over a's key after a got it and before b did.
func (e *evidence) replyCause(a, b checker.Hold) (Cause, bool) {
	for _, r := range slices.Backward(e.replies) {
		if r.Client == a.Client || r.Key != a.Key || r.Outcome != models.OK || r.Call > b.Start || history.Returned(r, e.last) < a.Start {
			continue
		}
		// Only a plain DEL removes whatever key is there: a script's
		// compare-and-delete that said yes removed its sender's own.
		name, _, _ := strings.Cut(r.Command, " ")
		at := clamp(r.Call, a.Start, b.Start)
		switch {
		case (name == "DEL" || name == "UNLINK") && r.Phase == "release":
			return Cause{At: at, Client: r.Client, Kind: Release,
				Text: fmt.Sprintf("client %d's late release: its %s, sent at %s, deletes client %d's key", r.Client, name, ms(r.Call), a.Client)}, true
		case name == "DEL" || name == "UNLINK":
			return Cause{At: at, Client: r.Client, Kind: Release,
				Text: fmt.Sprintf("client %d's %s (%s, sent at %s) deletes client %d's key", r.Client, name, phaseWord(r.Phase), ms(r.Call), a.Client)}, true
		case name == "GETSET" || name == "SET" && !strings.Contains(r.Command, "NX"):
			return Cause{At: at, Client: r.Client, Kind: Release,
				Text: fmt.Sprintf("client %d's %s (%s) takes client %d's key over", r.Client, r.Command, phaseWord(r.Phase), a.Client)}, true
		}
	}
	return Cause{}, false
}

// releaseCause is a release by another client that was under way after a
// got the lock, began before b got it, and ended that client's own hold:
// it freed a lock it no longer held, a's.
func (e *evidence) releaseCause(a, b checker.Hold) (Cause, bool) {
	r, _, ok := e.culprit(a, b)
	// A release sent before a got the lock, and not held up on its way,
	// is the handover that let a in, not a late release.
	late := ok && (r.Call >= a.Start || slices.ContainsFunc(e.hatched[r.Client], func(f history.Op) bool {
		return f.Call <= r.Return && f.Return >= r.Call
	}))
	if !late || slices.ContainsFunc(e.replies, func(x history.Op) bool {
		return x.Client == r.Client && x.Call >= r.Call && x.Call <= r.Return
	}) {
		// The release's own commands are recorded: replyCause has told
		// whether one of them freed a's lock, and none did.
		return Cause{}, false
	}
	return Cause{At: clamp(r.Return, a.Start, b.Start), Client: r.Client, Kind: Release,
		Text: fmt.Sprintf("client %d's late release (sent at %s) deletes client %d's lock", r.Client, ms(r.Call), a.Client)}, true
}

// faultCause is the latest fault that frees a lock on its server, striking
// a's client or the system, after a got the lock and before b did.
func (e *evidence) faultCause(a, b checker.Hold) (Cause, bool) {
	var found *Cause
	for _, f := range e.losses {
		if f.Call > b.Start || f.Return < a.Start || (f.Client >= 0 && f.Client != a.Client) {
			continue
		}
		// A failover loses the lock when Sentinel promotes the replica, a
		// restart when the node serves again, empty.
		at, text := f.Call, faultName(f)
		if f.Part == history.PartFailover || f.Part == history.PartRestart {
			at = f.Return
		}
		if f.Part == history.PartFailover && f.Detail != "" {
			text = f.Detail
		}
		if at = clamp(at, a.Start, b.Start); found == nil || at >= found.At {
			found = &Cause{At: at, Client: -1, Kind: Fault,
				Text: fmt.Sprintf("%s: client %d's lock is lost with it", text, a.Client)}
		}
	}
	if found == nil {
		return Cause{}, false
	}
	return *found, true
}

// expiryCause is a's lease running out on the server before b got the
// lock. The server ran the command that took or last renewed the key no
// earlier than that command was sent, so the lease could end as early as
// ttl after it: the take's reply, else the acquire's Took, else the
// acquire's return, and a later renewal a node's reply recorded.
func (e *evidence) expiryCause(a, b checker.Hold) (Cause, bool) {
	ttl := e.ttl
	if ttl <= 0 {
		return Cause{}, false
	}
	from, what := a.Start, "its acquire returned"
	// The server counts the lease from when it ran the command that took
	// the lock, at the earliest when the acquire was called: a cleanup
	// sent from then on may have found it expired.
	earliest := a.Start
	for _, op := range e.acquired {
		if op.Client == a.Client && op.Key == a.Key && op.Return == a.Start {
			earliest = op.Call
			if op.Took > 0 {
				from, what = op.Took, "the command that took it was sent"
			}
		}
	}
	for _, r := range e.replies {
		if r.Client != a.Client || r.Key != a.Key || r.Outcome != models.OK || r.Call >= b.Start {
			continue
		}
		switch {
		case takes(r) && r.Call <= a.Start && r.Call >= from-ttl:
			from, what = r.Call, "its "+r.Command+" was sent"
		case renews(r) && r.Call >= a.Start:
			from, what = r.Call, "its last renewal ("+r.Command+") was sent"
		}
	}
	end := from + ttl
	if end > b.Start {
		return Cause{}, false
	}
	text := fmt.Sprintf("client %d's lease runs out on the server, %s after %s", a.Client, ms(ttl), what)
	if from != a.Start { // a send time already: the server's count began no earlier
		earliest = from
	}
	if r, ok := e.cleanup(a, b, earliest+ttl); ok {
		verb := "deletes"
		if r.Command == "UPDATE" {
			verb = "takes over"
		}
		return Cause{At: r.Call, Client: r.Client, Kind: Release,
			Text: fmt.Sprintf("%s; client %d's cleanup %s, sent at %s in its acquire, %s the expired lock", text, r.Client, r.Command, ms(r.Call), verb)}, true
	}
	return Cause{At: clamp(end, a.Start, b.Start), Client: -1, Kind: Expiry, Text: text}, true
}

// grantCause is a lock that never kept a client out for another
// client's hold: no acquire in the whole run was refused while only other
// clients held the lock (a refusal while the asker held it itself, a
// nested acquire, does not count). Nothing had to free a's hold: the lock
// let b in as it lets everyone in.
func (e *evidence) grantCause(a, b checker.Hold) (Cause, bool) {
	for client, refused := range e.refused {
		for _, t := range refused {
			if slices.ContainsFunc(e.holds, func(h checker.Hold) bool { return h.Client != client && h.Start <= t && t <= h.End }) {
				return Cause{}, false
			}
		}
	}
	return Cause{At: b.Start, Client: b.Client, Kind: Grant,
		Text: fmt.Sprintf("the lock never refuses a client for another's hold: client %d's hold keeps no one out", a.Client)}, true
}

// serverExpiryCause is a's key gone from the server before its lease,
// by the client's reckoning, ran out: b's take was granted, so the key
// was free, and no recorded reply, request or fault removed it. The
// server ended it by its own clock (memcached's whole seconds).
func (e *evidence) serverExpiryCause(a, b checker.Hold) (Cause, bool) {
	if e.ttl <= 0 || len(e.requests)+len(e.replies) == 0 {
		return Cause{}, false
	}
	return Cause{At: b.Start, Client: -1, Kind: Expiry,
		Text: fmt.Sprintf("nothing recorded removed client %d's key, yet the server let client %d take it %s after client %d did, within the run's TTL of %s: the server expired it by its own clock",
			a.Client, b.Client, ms(b.Start-a.Start), a.Client, ms(e.ttl))}, true
}

// requestCause is the last release of a client other than a's whose
// DELETE (memcached's, a SQL row's) the server said yes to, sent after a
// got the lock and before b did: a late release that deleted a's key. An
// acquire's DELETE is a cleanup, told with the expiry it follows, and
// etcd's DeleteRange removes only its sender's own key.
func (e *evidence) requestCause(a, b checker.Hold) (Cause, bool) {
	for _, r := range slices.Backward(e.requests) {
		if r.Client == a.Client || r.Key != a.Key || r.Outcome != models.OK || r.Call < a.Start || r.Call > b.Start || unchanged(r) {
			continue
		}
		if r.Command == "DELETE" && r.Phase == "release" {
			return Cause{At: r.Call, Client: r.Client, Kind: Release,
				Text: fmt.Sprintf("client %d's late release: its DELETE, sent at %s after client %d took the lock, deletes client %d's key", r.Client, ms(r.Call), a.Client, a.Client)}, true
		}
	}
	return Cause{}, false
}

// cleanup is a request in an acquire, of a client other than a's, that
// removed or took over a's expired row or key between its lease's end and
// b's acquire: a cleanup DELETE, a takeover UPDATE.
func (e *evidence) cleanup(a, b checker.Hold, end time.Duration) (history.Op, bool) {
	for _, r := range slices.Backward(e.requests) {
		if r.Client != a.Client && r.Key == a.Key && r.Outcome == models.OK && r.Phase == "acquire" && r.Call >= end && r.Call <= b.Start &&
			(r.Command == "DELETE" || r.Command == "UPDATE") && !unchanged(r) {
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

// culprit finds a release by a client other than a's holder that was
// still under way when a acquired and began before b did: it may have
// freed the lock a held (a DEL of someone else's lock). It returns the
// release and the hold it ended.
func (e *evidence) culprit(a, b checker.Hold) (history.Op, checker.Hold, bool) {
	for _, r := range slices.Backward(e.releases) {
		if r.Client == a.Client || r.Key != a.Key || r.Call > b.Start || r.Return < a.Start {
			continue
		}
		for _, h := range slices.Backward(e.holds) {
			if h.Client == r.Client && h.End == r.Call && h.EndedBy == history.KindRelease {
				return r, h, true
			}
		}
	}
	return history.Op{}, checker.Hold{}, false
}

// ended is the hold of the third client whose late release is c, the one
// its release ended, or nil.
func (e *evidence) ended(a, b checker.Hold, c Cause) *checker.Hold {
	if c.Kind != Release || c.Client == a.Client || c.Client == b.Client {
		return nil
	}
	for _, h := range slices.Backward(e.holds) {
		if h.Client == c.Client && h.EndedBy == history.KindRelease && h.Start < a.Start && h.End <= c.At {
			return &h
		}
	}
	return nil
}

// takes and renews tell a reply's command that took the key, or extended
// its expiry, by its name; a script by the phase it was sent in.
func takes(r history.Op) bool {
	name, _, _ := strings.Cut(r.Command, " ")
	switch name {
	case "SET", "SETNX", "SETEX", "PSETEX", "GETSET", "HSETNX":
		return true
	}
	return scripted(name) && r.Phase == "acquire"
}

func renews(r history.Op) bool {
	name, _, _ := strings.Cut(r.Command, " ")
	switch name {
	case "EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT":
		return true
	}
	return scripted(name) && r.Phase == "background"
}

func scripted(name string) bool {
	return name == "EVAL" || name == "EVALSHA" || name == "FCALL"
}

// faultName is a fault's label without its parenthesis.
func faultName(f history.Op) string {
	name, _, _ := strings.Cut(f.Fault, " (")
	return name
}

// ms is d in whole milliseconds, as the checkers write times.
func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
