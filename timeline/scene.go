// Package timeline draws what happened in one run, from its saved history
// and the checkers' verdicts: a timeline with one lane per client, per node
// and for the network, the first violation marked on it, and the violation's
// story as a sequence diagram. It is pure: history and verdicts in, SVG
// bytes and plain words out. The drawings work offline and need no
// JavaScript, so a report folder can be zipped and handed out.
package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// scene is a run, sorted into what the drawings show.
type scene struct {
	last    time.Duration // the end of the history
	clients []int         // workload clients, not the liveness probe
	holds   []checker.Hold
	refused map[int][]time.Duration // replies of refused acquires, per client
	crashes []history.Op
	// hatched are a client's own pauses and slow work, per client.
	hatched map[int][]history.Op
	lanes   []string                // node and network lanes, in drawing order
	faults  map[string][]history.Op // the faults of each node or network lane
	end     *history.End
	// endRecord is when the end record was written: the run's workload and
	// liveness probe were over.
	endRecord time.Duration
	checks    map[string]checker.Check
	sections  []history.Op
	releases  []history.Op // the workload's releases, Return filled in
	ops       []history.Op // the whole history, where a cause is found

	overlap *overlap    // the lock checker's first violation
	lost    *lostUpdate // the resource checker's first violation
	refusal *refusal    // the resource refusing a stale token: the fencing lesson
	stuck   *stuckKey   // the liveness checker's failure
	idle    []gap       // long waits for a free lock, when handover is slow

	// nodeHolds and nodeTicks are, per lock node, the spans in which it
	// held the key for a client and its refusals, read from the replies
	// that runs with more than one lock node record; empty otherwise.
	nodeHolds map[int][]nodeHold
	nodeTicks map[int][]nodeTick
}

// perNode reports whether the run recorded its lock nodes' replies, so
// that each node has a lane of holds and each client a colour.
func (s *scene) perNode() bool { return len(s.nodeHolds) > 0 || len(s.nodeTicks) > 0 }

type overlap struct{ a, b checker.Hold }

// to is where the overlap ends: the earlier of the two holds' ends.
func (o overlap) to() time.Duration { return min(o.a.End, o.b.End) }

type lostUpdate struct{ a, b history.Op }

// refusal is a write the resource refused for its stale token, and the
// newer token it had already seen.
type refusal struct {
	section history.Op
	newer   uint64
}

// stuckKey is a lock nobody got again: granted last at from.
type stuckKey struct {
	from    time.Duration
	holder  int // the client that holds it, or -1
	refused int // acquires refused since
}

// gap is a time the lock sat free while someone waited for it.
type gap struct {
	from, to time.Duration
	next     int // the client that got it after
}

// lesson reports whether the run's violation is drawn as a lesson, not a
// failure: the lock failed, but the resource refused the stale write.
func (s *scene) lesson() bool {
	return s.refusal != nil && s.checks[checker.CheckResource].Verdict == checker.OK
}

func newScene(ops []history.Op, checks []checker.Check) *scene {
	s := &scene{last: history.Last(ops), refused: map[int][]time.Duration{}, hatched: map[int][]history.Op{},
		faults: map[string][]history.Op{}, end: history.EndOf(ops), checks: map[string]checker.Check{}, ops: ops}
	for _, c := range checks {
		s.checks[c.Checker] = c
	}
	probe := map[int]bool{}
	for _, op := range ops {
		if op.Probe {
			probe[op.Client] = true
		}
	}
	for _, op := range ops {
		if op.Client >= 0 && !probe[op.Client] && op.Kind != history.KindFault && !slices.Contains(s.clients, op.Client) {
			s.clients = append(s.clients, op.Client)
		}
	}
	slices.Sort(s.clients)
	for _, h := range checker.Holds(ops) {
		if !probe[h.Client] {
			s.holds = append(s.holds, h)
		}
	}
	for _, op := range ops {
		if op.Probe {
			continue
		}
		switch op.Kind {
		case history.KindAcquire:
			if op.Outcome == models.Failed {
				s.refused[op.Client] = append(s.refused[op.Client], history.Returned(op, s.last))
			}

		case history.KindEnd:
			s.endRecord = op.Call
		case history.KindCrash:
			s.crashes = append(s.crashes, op)
		case history.KindSection:
			s.sections = append(s.sections, op)
		case history.KindRelease:
			op.Return = history.Returned(op, s.last)
			s.releases = append(s.releases, op)
		case history.KindFault:
			op.Return = history.Returned(op, s.last)
			if op.Client >= 0 && !onNetwork(op) {
				s.hatched[op.Client] = append(s.hatched[op.Client], op)
				continue
			}
			for _, lane := range faultLanes(op) {
				if _, ok := s.faults[lane]; !ok {
					s.lanes = append(s.lanes, lane)
				}
				s.faults[lane] = append(s.faults[lane], op)
			}
		}
	}
	s.nodeHolds, s.nodeTicks = nodeHolds(ops, s.ttl(), s.last, probe)
	for _, m := range []map[int]bool{keys(s.nodeHolds), keys(s.nodeTicks)} {
		for n := range m {
			if lane := fmt.Sprintf("node %d", n); !slices.Contains(s.lanes, lane) {
				s.lanes = append(s.lanes, lane)
			}
		}
	}
	slices.SortFunc(s.lanes, func(a, b string) int { return laneRank(a) - laneRank(b) })
	s.findViolations(ops)
	return s
}

// findViolations finds what each failing checker saw, to mark it.
func (s *scene) findViolations(ops []history.Op) {
	if v := s.checks[checker.CheckLock].Verdict; v == checker.Illegal || v == checker.Unknown {
		if a, b, ok := checker.FirstOverlap(ops); ok {
			s.overlap = &overlap{a, b}
		}
	}
	if s.checks[checker.CheckResource].Verdict == checker.Illegal {
		if a, b, ok := checker.FirstLostUpdate(ops); ok {
			s.lost = &lostUpdate{a, b}
		}
	}
	s.refusal = firstRefusal(s.sections)
	if s.checks[checker.CheckLiveness].Verdict == checker.Stuck {
		s.stuck = s.stuckKey()
	}
	if s.checks[checker.CheckHandover].Verdict == checker.Slow {
		s.idle = s.idleGaps()
	}
}

// firstRefusal is the first write the resource refused, with the newest
// token it had accepted before.
func firstRefusal(sections []history.Op) *refusal {
	byReturn := slices.Clone(sections)
	slices.SortFunc(byReturn, func(a, b history.Op) int { return cmp.Compare(a.Return, b.Return) })
	var newest uint64
	for _, op := range byReturn {
		switch op.Result {
		case models.Wrote:
			newest = max(newest, op.Token)
		case models.Rejected:
			return &refusal{section: op, newer: max(newest, op.Token+1)}
		}
	}
	return nil
}

func (s *scene) stuckKey() *stuckKey {
	k := &stuckKey{holder: -1}
	for _, h := range s.holds {
		if h.Start >= k.from {
			k.from, k.holder = h.Start, h.Client
		}
	}
	for _, c := range s.crashes {
		if c.Call > k.from && c.Client == k.holder {
			k.from = c.Call
		}
	}
	for _, ts := range s.refused {
		for _, t := range ts {
			if t > k.from {
				k.refused++
			}
		}
	}
	return k
}

// idleGaps are the waits between one client's release and the next
// client's acquire that are long against the lease: the lock was free, or
// held by nobody who used it, while others waited.
func (s *scene) idleGaps() []gap {
	least := 50 * time.Millisecond
	if s.end != nil && s.end.TTL > 0 {
		least = s.end.TTL / 4
	}
	var gaps []gap
	for i := 1; i < len(s.holds); i++ {
		prev, h := s.holds[i-1], s.holds[i]
		if prev.EndedBy == history.KindRelease && prev.Client != h.Client && h.Start-prev.End >= least {
			gaps = append(gaps, gap{from: prev.End, to: h.Start, next: h.Client})
		}
	}
	return gaps
}

// onNetwork reports whether a fault struck a client's links, and so is
// drawn in the network's lane rather than on the client's row.
func onNetwork(op history.Op) bool {
	return op.Client >= 0 && op.Target != nil && op.Target.Type == history.TargetLink
}

// faultLanes are the lanes a fault of the system is drawn in: Sentinel for
// a failover, the network, the node named by its role (the master), each
// lock node it touched, or the system when it says none.
func faultLanes(op history.Op) []string {
	t := op.Target
	switch {
	case op.Part == history.PartFailover:
		return []string{"Sentinel"}
	case onNetwork(op):
		return []string{"network"}
	case t == nil:
		return []string{"system"}
	case t.Role == "master":
		return []string{"master"}
	case t.Type == history.TargetNode || t.Type == history.TargetLink:
		var lanes []string
		for _, n := range t.Nodes {
			lanes = append(lanes, fmt.Sprintf("node %d", n))
		}
		if len(lanes) > 0 {
			return lanes
		}
	}
	return []string{"system"}
}

// keys is the set of m's keys.
func keys[V any](m map[int]V) map[int]bool {
	out := map[int]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func laneRank(lane string) int {
	switch lane {
	case "master":
		return 1000
	case "Sentinel":
		return 1001
	case "system":
		return 1002
	case "network":
		return 1003
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(lane, "node "))
	return n
}

// shortLabel is what a fault's label shows in a drawing: the label up to
// its first parenthesis, what it did without how; a client's own pause
// says "paused" on its row. It decides nothing: it only shortens the text
// people read.
func shortLabel(op history.Op) string {
	if op.FaultKind == "pause" && op.Part == "" && op.Client >= 0 {
		return "paused"
	}
	l := op.Fault
	if i := strings.Index(l, " ("); i > 0 {
		l = l[:i]
	}
	return l
}

// msText prints a time or a length in whole milliseconds.
func msText(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}
