package checker

import (
	"time"

	"github.com/locklab/locklab/history"
)

// Hold is a stretch of time during which a client believed it held a key:
// from its acquire's reply to its release's call, or to its crash.
type Hold struct {
	Client     int
	Key        string
	Start, End time.Duration
	// EndedBy is history.KindRelease, history.KindCrash, or history.KindEnd
	// when the hold never ended.
	EndedBy history.Kind
}

// Holds lists the holds of ops by start, as the lock and handover checkers
// see them, so that a drawing of the run shows what they judged.
func Holds(ops []history.Op) []Hold {
	hs := holds(ops)
	out := make([]Hold, len(hs))
	for i, h := range hs {
		out[i] = h.export()
	}
	return out
}

func (h hold) export() Hold {
	return Hold{Client: h.client, Key: h.key, Start: h.start, End: h.end, EndedBy: h.endedBy}
}

// FirstOverlap is the lock checker's first violation: the earliest hold that
// began while another client's hold on the same key was still going, and
// that other hold.
func FirstOverlap(ops []history.Op) (earlier, later Hold, ok bool) {
	a, b, ok := firstOverlap(holds(ops))
	return a.export(), b.export(), ok
}

// FirstLostUpdate is the resource checker's first violation: two critical
// sections that read the same stock and both wrote, so that one sale was
// lost. Earlier is the one that wrote first.
func FirstLostUpdate(ops []history.Op) (earlier, later history.Op, ok bool) {
	var sections []history.Op
	for _, op := range ops {
		if op.Kind == history.KindSection {
			sections = append(sections, op)
		}
	}
	return firstLostUpdate(sections)
}
