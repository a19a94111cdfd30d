// Package schedule draws what explore puts a lock through: a Plan of faults
// drawn by seed from every kind a topology supports (the Space), at random
// clients, phases and times, written as a Replay that draws it again.
package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/service"
)

// Fault is one drawn fault: the failpoints and scheduled faults that make it
// up. It is what a shrink drops, whole.
type Fault struct {
	Kind       string // the name of its kind, as -faults names it (e.g. "slow-work")
	What       string // one line: what it does to whom
	Failpoints []failpoint.Point
	Scheduled  []runner.ScheduledFault
	// MinDuration is the shortest workload its story needs; 0 for any.
	MinDuration time.Duration
	// Persistence is what the lock nodes must keep on disk for its story
	// (a node restarted with its data); the zero value keeps nothing.
	Persistence cluster.Persistence
}

// Plan is one run's schedule: the workload and the faults drawn from its
// seed. Keep, when not nil, names the drawn faults a shrink kept.
type Plan struct {
	// Version is the replay format version it was drawn at: which kinds
	// its seed drew from (see ReplayVersion).
	Version int
	Seed    int64
	// Run is the plan's number in its exploration, from 0: the Run-th seed
	// the exploration's seed drew. A replay's plan is run 0.
	Run      int
	Topology cluster.Topology
	Workload runner.Workload
	Faults   []Fault
	Keep     []int
}

// Kept is the faults the run injects: every drawn fault, or those Keep names.
func (p Plan) Kept() []Fault {
	if p.Keep == nil {
		return p.Faults
	}
	kept := make([]Fault, 0, len(p.Keep))
	for _, i := range p.Keep {
		kept = append(kept, p.Faults[i])
	}
	return kept
}

// Keeping is p with only the drawn faults at indexes keep; it refuses an
// index that names no drawn fault.
func (p Plan) Keeping(keep []int) (Plan, error) {
	if keep == nil {
		p.Keep = nil
		return p, nil
	}
	k := slices.Clone(keep)
	slices.Sort(k)
	k = slices.Compact(k)
	for _, i := range k {
		if i < 0 || i >= len(p.Faults) {
			return Plan{}, fmt.Errorf("replay %s keeps fault %d, but its schedule drew only faults 0 to %d", Replay{Version: p.Version, Seed: p.Seed}, i, len(p.Faults)-1)
		}
	}
	p.Keep = k
	return p, nil
}

// Replay is how to run p again.
func (p Plan) Replay() Replay { return Replay{Version: p.Version, Seed: p.Seed, Keep: p.Keep} }

// Scenario is p as the harness runs it. Its workload lasts long enough for
// the story of every kept fault.
func (p Plan) Scenario() runner.Scenario {
	s := runner.Scenario{
		Name:        "explore-" + p.Replay().String(),
		Description: p.String(),
		Topology:    p.Topology,
		Workload:    p.Workload,
	}
	for _, f := range p.Kept() {
		s.Failpoints = append(s.Failpoints, f.Failpoints...)
		s.Faults = append(s.Faults, f.Scheduled...)
		s.MinDuration = max(s.MinDuration, f.MinDuration)
		s.Persistence = max(s.Persistence, f.Persistence)
	}
	if s.Workload.Duration < s.MinDuration {
		s.Workload.Duration = s.MinDuration + time.Second
	}
	return s
}

// String describes p in one line: its workload and each kept fault with
// its index among the drawn ones.
func (p Plan) String() string {
	w := p.Workload
	var b strings.Builder
	fmt.Fprintf(&b, "%d clients, TTL %s, work %s", w.Clients, w.TTL, w.Work)
	if w.Nested {
		b.WriteString(", nested critical sections")
	}
	idx := p.Keep
	if idx == nil {
		for i := range p.Faults {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		b.WriteString("; no fault")
	}
	for _, i := range idx {
		fmt.Fprintf(&b, "; [%d] %s", i, p.Faults[i].What)
	}
	return b.String()
}

// Replay names one run: the format version and seed its schedule is drawn
// from and, after a shrink, the drawn faults it keeps. Its text form is
// "vN:SEED", or "vN:SEED:i,j" after a shrink ("vN:SEED:" keeps none); the
// forms of before versions, "SEED" and "SEED:i,j", are version 1.
type Replay struct {
	// Version fixes the kinds the seed draws from (see ReplayVersion);
	// 0 is ReplayVersion.
	Version int
	Seed    int64
	Keep    []int // nil: every drawn fault; empty: none
}

// version is r's format version, 0 read as the newest.
func (r Replay) version() int {
	if r.Version == 0 {
		return ReplayVersion
	}
	return r.Version
}

// String is r's text form, always with its version: "v1:42", "v1:42:0,2".
func (r Replay) String() string {
	s := "v" + strconv.Itoa(r.version()) + ":" + strconv.FormatInt(r.Seed, 10)
	if r.Keep == nil {
		return s
	}
	idx := make([]string, len(r.Keep))
	for i, k := range r.Keep {
		idx[i] = strconv.Itoa(k)
	}
	return s + ":" + strings.Join(idx, ",")
}

// ParseReplay reads a Replay from its text form (see Replay). A string
// without a version is of version 1, as every replay written before
// replays carried one; a version this build does not know is refused.
func ParseReplay(s string) (Replay, error) {
	r, rest := Replay{Version: 1}, s
	if v, ok := strings.CutPrefix(s, "v"); ok {
		num, after, ok := strings.Cut(v, ":")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n <= 0 || num != strconv.Itoa(n) {
			return Replay{}, fmt.Errorf("replay %q: want vN:SEED or vN:SEED:i,j with N a format version from 1 to %d", s, ReplayVersion)
		}
		if n > ReplayVersion {
			return Replay{}, fmt.Errorf("replay %q: unknown format version %d: this build draws versions 1 to %d (was it written by a newer locklab?)", s, n, ReplayVersion)
		}
		r.Version, rest = n, after
	}
	seed, list, shrunk := strings.Cut(rest, ":")
	n, err := strconv.ParseInt(seed, 10, 64)
	if err != nil || n <= 0 {
		return Replay{}, fmt.Errorf("replay %q: want vN:SEED or vN:SEED:i,j (or SEED, SEED:i,j of version 1) with SEED a positive integer", s)
	}
	r.Seed = n
	if !shrunk {
		return r, nil
	}
	r.Keep = []int{}
	if list == "" {
		return r, nil
	}
	for _, f := range strings.Split(list, ",") {
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 {
			return Replay{}, fmt.Errorf("replay %q: fault index %q is not a non-negative integer", s, f)
		}
		r.Keep = append(r.Keep, i)
	}
	return r, nil
}

// Plan draws r's schedule from every fault kind of its version and keeps
// the faults r names.
func (r Replay) Plan(t cluster.Topology, nested bool) (Plan, error) {
	return r.PlanIn(Space{}, t, nested)
}

// PlanIn draws r's schedule from the kinds of space of r's version and
// keeps the faults r names: a replay draws the plan of its run only from
// the same space. It refuses a version this build does not know, and a
// space that leaves the version no kind on t.
func (r Replay) PlanIn(space Space, t cluster.Topology, nested bool) (Plan, error) {
	v := r.version()
	if v < 1 || v > ReplayVersion {
		return Plan{}, fmt.Errorf("replay %s: unknown format version %d: this build draws versions 1 to %d", r, v, ReplayVersion)
	}
	if t == "" {
		t = cluster.Single
	}
	if len(space.kindsFor(allKinds, v, t)) == 0 {
		return Plan{}, fmt.Errorf("replay %s: the fault space (%s) leaves no kind of version %d that the %s topology supports", r, space, v, t)
	}
	return space.draw(allKinds, v, t, nested, r.Seed).Keeping(r.Keep)
}

// Workload shape of every run: short leases and runs, so a run lasts a few
// seconds. Redlock's lease leaves room for five round trips. A command waits
// a second for its reply (harness's default, set here so that the draws
// timed against it keep their meaning): five single-node leases.
const (
	clients        = 4
	ttl            = 200 * time.Millisecond
	redlockTTL     = 300 * time.Millisecond
	runFor         = 1500 * time.Millisecond
	redlockRunFor  = 2 * time.Second
	timeout        = time.Second
	failoverStory  = 5 * time.Second // as scenarios' failover: client 0's third cycle, then a second holder
	failpointRetry = time.Second     // longest pause until another client holds the lock
)

// Draw draws a plan for the topology from seed, from every fault kind of
// ReplayVersion: the same seed always gives the same plan. Nested makes
// every critical section take the lock again, for locks callers nest.
func Draw(t cluster.Topology, nested bool, seed int64) Plan {
	return Space{}.Draw(t, nested, seed)
}

// Draw draws a plan for the topology from seed, from the kinds of s of
// ReplayVersion: the same space and seed always give the same plan.
func (s Space) Draw(t cluster.Topology, nested bool, seed int64) Plan {
	return s.draw(allKinds, ReplayVersion, t, nested, seed)
}

// draw draws a plan for the topology from seed, from the kinds of s among
// those of list that version draws. Its list is a parameter so that a test
// can show a kind of a later version leaves the draws of earlier versions
// as they were.
func (s Space) draw(list []kind, version int, t cluster.Topology, nested bool, seed int64) Plan {
	if t == "" {
		t = cluster.Single
	}
	d := drawer{rng: rand.New(rand.NewPCG(uint64(seed), 0x10c4)), topology: t, ttl: ttl, duration: runFor}
	if t == cluster.Redlock {
		d.ttl, d.duration = redlockTTL, redlockRunFor
	}
	if p, ok := service.For(t).(service.Paced); ok {
		d.ttl, d.duration = p.Pace()
	}
	p := Plan{Version: version, Seed: seed, Topology: t, Workload: runner.Workload{
		Clients: clients, TTL: d.ttl, Duration: d.duration, Nested: nested, Timeout: timeout,
		Work: time.Duration(3+d.rng.IntN(8)) * 10 * time.Millisecond, // 30–100 ms
	}}
	if t.Service() == cluster.Etcd {
		// As the catalogue's etcd scenarios: the stock an etcd key, which
		// a lease can guard.
		p.Workload.Resource = runner.EtcdResource
	}
	// Alone half the time, with one or two others the rest.
	n := 1
	switch x := d.rng.Float64(); {
	case x >= 0.8:
		n = 3
	case x >= 0.5:
		n = 2
	}
	kinds := s.kindsFor(list, version, t)
	if len(kinds) == 0 {
		return p // a space that leaves this topology nothing: Config refuses it
	}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	// At most one crash a run: with more, most clients are gone, the few
	// handovers left make the handover verdict a matter of luck, and the
	// reference run would not agree with the run. A space of crashes alone
	// draws one.
	crashed := false
	for len(p.Faults) < n {
		x := d.rng.IntN(total)
		for _, k := range kinds {
			if x -= k.weight; x >= 0 {
				continue
			}
			if !(crashed && k.crash) {
				crashed = crashed || k.crash
				f := k.draw(&d)
				f.Kind = k.Name
				p.Faults = append(p.Faults, f)
			} else if !slices.ContainsFunc(kinds, func(k kind) bool { return !k.crash }) {
				n = len(p.Faults)
			}
			break
		}
	}
	return p
}

// Space is the fault kinds explore draws from, as a user states it (what
// Jepsen's --nemesis says): every kind, or only the kinds named, less the
// kinds left out. The zero Space is every kind.
type Space struct {
	only []string // the kinds named alone; nil: every kind
	out  []string // the kinds left out
}

// NewSpace reads a space from kind names (see Kinds), each "name" to draw
// only the kinds so named or "-name" to leave one out; an element may hold
// several, separated by commas. No name at all is every kind. An unknown
// name is an error that lists the known ones.
func NewSpace(faults []string) (Space, error) {
	var s Space
	for _, list := range faults {
		for _, name := range strings.Split(list, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			out := strings.HasPrefix(name, "-")
			name = strings.TrimPrefix(name, "-")
			if !slices.ContainsFunc(allKinds, func(k kind) bool { return k.Name == name }) {
				return Space{}, fmt.Errorf("unknown fault kind %q; the kinds are %s", name, strings.Join(kindNames(), ", "))
			}
			if out {
				s.out = append(s.out, name)
			} else {
				s.only = append(s.only, name)
			}
		}
	}
	return s, nil
}

// kindNames are the names of every kind, in Kinds' order.
func kindNames() []string {
	names := make([]string, len(allKinds))
	for i, k := range allKinds {
		names[i] = k.Name
	}
	return names
}

// Has reports whether the space draws the kind named name, on the
// topologies that kind is drawn on.
func (s Space) Has(name string) bool {
	return (s.only == nil || slices.Contains(s.only, name)) && !slices.Contains(s.out, name)
}

// String says what the space draws: "every kind", "every kind but
// slow-work", "only slow-work, pause-holder".
func (s Space) String() string {
	var b strings.Builder
	if s.only == nil {
		b.WriteString("every kind")
	} else {
		b.WriteString("only " + strings.Join(s.only, ", "))
	}
	if len(s.out) > 0 {
		b.WriteString(" but " + strings.Join(s.out, ", "))
	}
	return b.String()
}

// Check reports an error when the space leaves no kind to draw on t.
func (s Space) Check(t cluster.Topology) error {
	if t == "" {
		t = cluster.Single
	}
	if len(s.kindsFor(allKinds, ReplayVersion, t)) == 0 {
		return fmt.Errorf("the fault space (%s) leaves no kind that the %s topology supports", s, t)
	}
	return nil
}

// kindsFor lists the kinds of list, in its order, that version draws, the
// space has and a topology supports. The weights favour the faults that
// expose the classic pitfalls: a crash just after the command that took
// the key, a release that comes after the lease expired, work that
// outlives the lease, a client clock that runs ahead, a renewal that fails
// while the work outlives the lease.
func (s Space) kindsFor(list []kind, version int, t cluster.Topology) []kind {
	var ks []kind
	for _, k := range list {
		if k.since <= version && s.Has(k.Name) && k.DrawnOn(t) {
			ks = append(ks, k)
		}
	}
	return ks
}

// drawer draws the parts of one plan from its random source.
type drawer struct {
	rng      *rand.Rand
	topology cluster.Topology
	ttl      time.Duration
	duration time.Duration
}

func (d *drawer) client() int { return d.rng.IntN(clients) }

// skip is how many hits a failpoint armed for one client lets pass: it
// strikes one of the client's first few cycles.
func (d *drawer) skip() int { return d.rng.IntN(3) }

// anySkip is how many hits a failpoint armed for any client lets pass: it
// strikes one of the first cycles of the run. A failpoint counted over all
// clients strikes at the same point of the run whichever client wins each
// race for the lock, so the reference run, which races differently, meets
// it in the same place; one armed for a single client may meet it in
// another place, or never.
func (d *drawer) anySkip() int { return d.rng.IntN(6) }

// pick returns one of xs.
func pick[T any](d *drawer, xs ...T) T { return xs[d.rng.IntN(len(xs))] }

// short is well inside a lease: 20 ms to a quarter TTL.
func (d *drawer) short() time.Duration {
	return 20*time.Millisecond + time.Duration(d.rng.Int64N(int64(d.ttl/4-20*time.Millisecond)+1)).Round(time.Millisecond)
}

// shortOrLong is short or long, as a coin falls.
func (d *drawer) shortOrLong() time.Duration {
	span := d.short()
	if d.rng.IntN(2) == 0 {
		span = d.long()
	}
	return span
}

// long is well past a lease: two to three TTLs.
func (d *drawer) long() time.Duration {
	return d.between(2*d.ttl, 3*d.ttl)
}

// at is a time inside the run, early enough for the fault to matter.
func (d *drawer) at() time.Duration {
	return 100*time.Millisecond + time.Duration(d.rng.Int64N(int64(d.duration-500*time.Millisecond))).Round(10*time.Millisecond)
}

// failpoint arms a at name for one client's hit after skip hits. Every
// drawn failpoint is optional: a lock that never gets there simply has a
// run without that fault.
func (d *drawer) failpoint(name string, client, skip, times int, a failpoint.Action) failpoint.Point {
	return failpoint.Point{Name: name, Client: client, Skip: skip, Times: times, Action: a, Optional: true}
}

// hits says which hits of a failpoint fire.
func hits(client, skip, times int) string {
	over := ""
	if client == failpoint.AnyClient {
		over = " over all clients"
	}
	if times <= 1 {
		return fmt.Sprintf("hit %d%s", skip+1, over)
	}
	return fmt.Sprintf("hits %d-%d%s", skip+1, skip+times, over)
}

// who names the client a failpoint fires for.
func who(client int) string {
	if client == failpoint.AnyClient {
		return "a client"
	}
	return fmt.Sprintf("client %d", client)
}

// commandPoint draws a command failpoint of one of phases.
func (d *drawer) commandPoint(phases ...failpoint.Phase) string {
	p, k := pick(d, phases...), 1+d.rng.IntN(2)
	if d.rng.IntN(2) == 0 {
		return failpoint.BeforeCommand(p, k)
	}
	return failpoint.AfterCommand(p, k)
}

// took is the failpoint just after the command of an Acquire that took
// the lock: AfterTook where the harness can tell it (Redis), else just
// after one of the acquire's first two statements.
func (d *drawer) took() string {
	if d.topology.Service() == cluster.Redis {
		return failpoint.AfterTook
	}
	return failpoint.AfterCommand(failpoint.PhaseAcquire, 1+d.rng.IntN(2))
}

func (d *drawer) crashAcquire() Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	name := d.took()
	if d.rng.IntN(4) == 0 {
		name = failpoint.AfterCommand(failpoint.PhaseAcquire, 1+d.rng.IntN(2))
	}
	return Fault{What: fmt.Sprintf("%s crashes %s (%s)", who(c), name, hits(c, skip, 1)),
		Failpoints: []failpoint.Point{d.failpoint(name, c, skip, 1, failpoint.Crash())}}
}

func (d *drawer) crash() Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	name := failpoint.CriticalSection
	// ZooKeeper's requests go through no command hook (its client has
	// none): none would fire there.
	if d.rng.IntN(2) == 0 && d.topology.Service() != cluster.ZooKeeper {
		name = d.commandPoint(failpoint.PhaseSection, failpoint.PhaseRelease, failpoint.PhaseBackground)
	}
	return Fault{What: fmt.Sprintf("%s crashes at %s (%s)", who(c), name, hits(c, skip, 1)),
		Failpoints: []failpoint.Point{d.failpoint(name, c, skip, 1, failpoint.Crash())}}
}

func (d *drawer) pauseRelease() Fault {
	c, skip, times := failpoint.AnyClient, d.anySkip(), 1+d.rng.IntN(3)
	k := 1
	if d.rng.IntN(4) == 0 {
		k = 2
	}
	name := failpoint.BeforeCommand(failpoint.PhaseRelease, k)
	if d.rng.IntN(2) == 0 {
		name = failpoint.AfterCommand(failpoint.PhaseRelease, k)
	}
	a := failpoint.PauseUntil(failpoint.Acquired, failpointRetry)
	return Fault{What: fmt.Sprintf("%s pauses %s until another client holds the lock (%s)", who(c), name, hits(c, skip, times)),
		Failpoints: []failpoint.Point{d.failpoint(name, c, skip, times, a)}}
}

func (d *drawer) slowWork() Fault {
	c, skip, times, span := failpoint.AnyClient, d.anySkip(), 1+d.rng.IntN(2), d.long()
	return Fault{What: fmt.Sprintf("%s's critical section works %s longer (%s)", who(c), span, hits(c, skip, times)),
		Failpoints: []failpoint.Point{d.failpoint(failpoint.CriticalSection, c, skip, times, failpoint.Sleep(span))}}
}

func (d *drawer) pauseHolder() Fault {
	c, skip, span := failpoint.AnyClient, d.anySkip(), d.long()
	return Fault{What: fmt.Sprintf("%s pauses (stop-the-world) %s in its critical section (%s)", who(c), span, hits(c, skip, 1)),
		Failpoints: []failpoint.Point{d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Pause(span))}}
}

func (d *drawer) commandPause() Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	name := d.commandPoint(failpoint.PhaseAcquire, failpoint.PhaseSection, failpoint.PhaseRelease, failpoint.PhaseBackground)
	span := d.shortOrLong()
	return Fault{What: fmt.Sprintf("%s pauses (stop-the-world) %s %s (%s)", who(c), span, name, hits(c, skip, 1)),
		Failpoints: []failpoint.Point{d.failpoint(name, c, skip, 1, failpoint.Pause(span))}}
}

func (d *drawer) commandDelay() Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	name := d.commandPoint(failpoint.PhaseAcquire, failpoint.PhaseSection, failpoint.PhaseRelease, failpoint.PhaseBackground)
	if d.rng.IntN(3) == 0 {
		name = d.took()
	}
	span := d.shortOrLong()
	return Fault{What: fmt.Sprintf("%s's command is delayed %s %s (%s)", who(c), span, name, hits(c, skip, 1)),
		Failpoints: []failpoint.Point{d.failpoint(name, c, skip, 1, failpoint.Sleep(span))}}
}

func (d *drawer) dropReply() Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	// A lost reply matters most where the lock decides on it: whether it
	// holds the lock (here), whether it gave it back (drop-release).
	name := d.commandPoint(failpoint.PhaseAcquire, failpoint.PhaseAcquire, failpoint.PhaseRelease, failpoint.PhaseSection, failpoint.PhaseBackground)
	if d.rng.IntN(4) == 0 {
		name = d.took()
	}
	// The client sees the loss only after its timeout; what it does then
	// (a retry, a fallback) needs the run to go on after that.
	return Fault{What: fmt.Sprintf("%s loses the reply %s (%s)", who(c), name, hits(c, skip, 1)),
		Failpoints:  []failpoint.Point{d.failpoint(name, c, skip, 1, failpoint.DropReply())},
		MinDuration: timeout + d.duration}
}

// dropRelease is lost-release-reply's story drawn: a release whose first
// command got no reply is over only for a lock that trusts the command
// ran. One that sends another (a plain DEL, a retry) sends it when it hurts
// most: just after another client took the lock. By then the lease is long
// gone, so the wait holds up no holder.
func (d *drawer) dropRelease() Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	name := failpoint.AfterCommand(failpoint.PhaseRelease, 1)
	if d.rng.IntN(2) == 0 {
		name = failpoint.BeforeCommand(failpoint.PhaseRelease, 1)
	}
	next, wait := failpoint.BeforeCommand(failpoint.PhaseRelease, 2), 2*d.ttl
	return Fault{What: fmt.Sprintf("%s loses the reply %s (%s); a release command after it waits until another client acquires (%s at most)", who(c), name, hits(c, skip, 1), wait),
		Failpoints: []failpoint.Point{
			d.failpoint(name, c, skip, 1, failpoint.DropReply()),
			d.failpoint(next, c, 0, 1, failpoint.SleepUntil(failpoint.Acquired, wait)),
		},
		MinDuration: timeout + d.duration}
}

// brief is a cut short enough that a watchdog renewing every third of a
// lease has its next renewal after the cut healed: 10 ms to an eighth of a
// TTL. The command it strikes fails at once, well inside the lease.
func (d *drawer) brief() time.Duration { return d.between(10*time.Millisecond, d.ttl/8) }

// renewal is the story the renewal kinds share: client c's critical
// section works past its lease, so the client keeps the lock only by
// renewing, and its k-th background command (the second or third renewal
// of a watchdog that renews every third of a lease, which a section of
// ordinary length never reaches) meets action a, once. The failpoints are
// the client's own, so that the renewal struck is the slow section's.
func (d *drawer) renewal(c int, before bool, a failpoint.Action, what string) Fault {
	skip, span, k := d.skip(), d.long(), 2+d.rng.IntN(2)
	name := failpoint.AfterCommand(failpoint.PhaseBackground, k)
	if before {
		name = failpoint.BeforeCommand(failpoint.PhaseBackground, k)
	}
	return Fault{What: fmt.Sprintf("client %d's critical section works %s longer (%s); at %s (once), %s", c, span, hits(c, skip, 1), name, what),
		Failpoints: []failpoint.Point{
			d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Sleep(span)),
			d.failpoint(name, c, 0, 1, a),
		}}
}

func (d *drawer) cutRenewal() Fault {
	c, cut := d.client(), d.brief()
	return d.renewal(c, true, failpoint.Inject(fault.Partition{Client: c}, cut),
		fmt.Sprintf("it is cut off from the lock nodes for %s: the command fails at once", cut))
}

func (d *drawer) dropRenewal() Fault {
	return d.renewal(d.client(), false, failpoint.DropReply(), fmt.Sprintf("the reply is lost: the client waits its %s timeout", timeout))
}

func (d *drawer) slowRenewal() Fault {
	// Each way past the timeout, so that no reply comes in time and the
	// command reaches Redis only after the client gave up on it; it lasts
	// until then.
	c, delay := d.client(), d.between(timeout, timeout+d.ttl)
	return d.renewal(c, true, failpoint.Inject(fault.Latency{Client: c, Delay: delay}, delay+timeout),
		fmt.Sprintf("its links get %s latency each way, past its %s timeout, for %s", delay, timeout, delay+timeout))
}

func (d *drawer) cutHolder() Fault {
	c, skip, span := d.client(), d.skip(), d.brief()
	if d.rng.IntN(2) == 0 {
		span = d.long()
	}
	f := fault.Partition{Client: c}
	return Fault{What: fmt.Sprintf("right after client %d's acquire (%s), %s for %s", c, hits(c, skip, 1), f, span),
		Failpoints: []failpoint.Point{d.failpoint(failpoint.Acquired, c, skip, 1, failpoint.Inject(f, span))}}
}

func (d *drawer) dropConnection() Fault {
	c, skip := d.client(), d.skip()
	name := failpoint.Acquired
	if d.rng.IntN(2) == 0 {
		name = failpoint.BeforeCommand(pick(d, failpoint.PhaseAcquire, failpoint.PhaseSection, failpoint.PhaseRelease, failpoint.PhaseBackground), 1+d.rng.IntN(2))
	}
	f := fault.DropConnection{Client: c}
	// A drop is over at once: a span of a millisecond keeps its record
	// from standing for a stall it did not cause.
	return Fault{What: fmt.Sprintf("%s, at %s (%s)", f, name, hits(c, skip, 1)),
		Failpoints: []failpoint.Point{d.failpoint(name, c, skip, 1, failpoint.Inject(f, time.Millisecond))}}
}

// killConnection has the server kill a client's connections where a lock
// bound to a connection is held: right after its acquire or in its
// critical section. An SQL client has no command failpoints.
func (d *drawer) killConnection() Fault {
	c, skip := d.client(), d.skip()
	name := pick(d, failpoint.Acquired, failpoint.CriticalSection)
	f := fault.KillConnection{Client: c}
	// A kill is over at once, as a drop is.
	fps := []failpoint.Point{d.failpoint(name, c, skip, 1, failpoint.Inject(f, time.Millisecond))}
	what := fmt.Sprintf("%s, at %s (%s)", f, name, hits(c, skip, 1))
	if name == failpoint.CriticalSection && d.rng.IntN(2) == 0 {
		// The holder works on until another client is in: what a lock
		// bound to the connection lost shows, as in kill-connection-sql.
		wait := 2 * d.ttl
		fps = append(fps, d.failpoint(name, c, skip, 1, failpoint.SleepUntil(failpoint.CriticalSection, wait)))
		what += fmt.Sprintf(", and works on until another client is in its critical section (%s at most)", wait)
	}
	return Fault{What: what, Failpoints: fps}
}

// busyPool is busy-pool-sql's stage drawn: another part of the client's
// process takes the pooled connection it used last just before one of its
// acquires, and gives it back once the client is in its critical section.
func (d *drawer) busyPool() Fault {
	c, skip := d.client(), d.skip()
	a := failpoint.HoldConn(failpoint.CriticalSection, 2*time.Second)
	return Fault{What: fmt.Sprintf("another user of client %d's SQL pool holds a connection from %s until its critical section (%s)", c, failpoint.BeforeAcquire, hits(c, skip, 1)),
		Failpoints: []failpoint.Point{d.failpoint(failpoint.BeforeAcquire, c, skip, 1, a)}}
}

// scheduled is a fault injected at a drawn time for a drawn while.
func (d *drawer) scheduled(f fault.Fault, span time.Duration) Fault {
	at := d.at()
	return Fault{What: fmt.Sprintf("at %s for %s: %s", at, span, f),
		Scheduled: []runner.ScheduledFault{{At: at, For: span, Fault: f}}}
}

// between draws a duration in [lo, hi], in 10 ms steps.
func (d *drawer) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(d.rng.Int64N(int64(hi-lo)+1)).Round(10*time.Millisecond)
}

func (d *drawer) clockSkew() Fault {
	by := time.Duration(pick(d, 3, 5, 10)) * d.ttl
	if d.rng.IntN(5) == 0 {
		by = -by
	}
	return d.scheduled(fault.ClockSkew{Client: d.client(), By: by}, d.between(500*time.Millisecond, time.Second))
}

func (d *drawer) partition() Fault {
	f := fault.Partition{Client: d.client()}
	if d.topology == cluster.Redlock && d.rng.IntN(2) == 0 {
		f.Nodes = d.nodes(1 + d.rng.IntN(3))
	}
	return d.scheduled(f, d.between(100*time.Millisecond, 600*time.Millisecond))
}

func (d *drawer) latency() Fault {
	// At most an eighth of a TTL each way: a watchdog still renews in time.
	f := fault.Latency{Client: d.client(), Delay: d.between(5*time.Millisecond, d.ttl/8)}
	return d.scheduled(f, d.between(200*time.Millisecond, 800*time.Millisecond))
}

func (d *drawer) blackHole() Fault {
	f := fault.BlackHole{Client: d.client(), Direction: pick(d, network.Upstream, network.Downstream)}
	return d.scheduled(f, d.between(100*time.Millisecond, 500*time.Millisecond))
}

func (d *drawer) pauseNode() Fault {
	n := 0
	if d.topology == cluster.Redlock {
		n = d.rng.IntN(5)
	}
	// Shorter than Sentinel's down-after, so the replicated topology does
	// not fail over.
	return d.scheduled(fault.PauseNode{Node: n}, d.between(100*time.Millisecond, 400*time.Millisecond))
}

// nodes draws n distinct Redlock nodes.
func (d *drawer) nodes(n int) []int {
	return slices.Sorted(slices.Values(d.rng.Perm(5)[:n]))
}

// failover is the story of scenarios' failover: before client 0's third
// acquire replication is cut, and inside that critical section the master
// is killed; the section lasts until another client is in its own. Half
// the time, as in failover-wait, one replica is Sentinel's preferred all
// run and only its replication is cut: the other one acknowledges a WAIT,
// and the preferred one, which never had the lock, is promoted.
func (d *drawer) failover() Fault {
	cut := pick(d, []int{1, 2}, []int{1}, []int{2})
	var scheduled []runner.ScheduledFault
	what := ""
	if d.rng.IntN(2) == 0 {
		prefer := fault.PreferReplica{Node: pick(d, 1, 2)}
		cut = []int{prefer.Node}
		scheduled = []runner.ScheduledFault{{For: failpoint.WholeRun, Fault: prefer}}
		what = fmt.Sprintf("all run data node %d is Sentinel's preferred replica; ", prefer.Node)
	}
	return Fault{
		What: what + fmt.Sprintf("before client 0's third acquire replication to data nodes %v is cut; in that critical section "+
			"the master is killed and Sentinel fails over; the section lasts until another client is in its own", cut),
		MinDuration: failoverStory,
		Failpoints: []failpoint.Point{
			d.failpoint(failpoint.BeforeAcquire, 0, 2, 1, failpoint.Inject(fault.CutReplication{Replicas: cut}, failpoint.WholeRun)),
			d.failpoint(failpoint.CriticalSection, 0, 2, 1, failpoint.Inject(fault.KillMaster{}, 500*time.Millisecond)),
			d.failpoint(failpoint.CriticalSection, 0, 2, 1, failpoint.SleepUntil(failpoint.CriticalSection, 3*time.Second)),
		},
		Scheduled: scheduled,
	}
}

// killNode kills a Redlock node while a client holds the lock, restarting
// it at once or after a lease: empty, or, a third of the time, with its
// data on nodes that persist every write (redlock-restart-fsync). Half the
// time that client is also cut off from two other nodes for the whole run,
// as in redlock-restart.
func (d *drawer) killNode() Fault {
	c, skip := d.client(), d.skip()
	nodes := d.rng.Perm(5)
	restart := time.Duration(0)
	if d.rng.IntN(2) == 0 {
		restart = d.ttl + 100*time.Millisecond
	}
	f := fault.KillNode{Node: nodes[0], KeepData: d.rng.IntN(3) == 0}
	drawn := Fault{What: fmt.Sprintf("while %s holds the lock (%s): %s, after %s", who(c), hits(c, skip, 1), f, restart),
		Failpoints: []failpoint.Point{d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Inject(f, restart))}}
	if f.KeepData {
		drawn.Persistence = cluster.AOFAlways
		drawn.What += "; every lock node persists every write (appendfsync always)"
	}
	if d.rng.IntN(2) == 0 {
		cut := fault.Partition{Client: c, Nodes: slices.Sorted(slices.Values(nodes[1:3]))}
		drawn.What += fmt.Sprintf("; client %d is cut off from lock nodes %v all run", c, cut.Nodes)
		drawn.Scheduled = []runner.ScheduledFault{{For: failpoint.WholeRun, Fault: cut}}
	}
	return drawn
}

func (d *drawer) clockJump() Fault {
	c, skip := failpoint.AnyClient, d.anySkip()
	f := fault.ClockJump{Node: d.rng.IntN(5), By: d.ttl}
	return Fault{What: fmt.Sprintf("while %s holds the lock (%s): clock jump of %s on lock node %d", who(c), hits(c, skip, 1), f.By, f.Node),
		Failpoints: []failpoint.Point{d.failpoint(failpoint.CriticalSection, c, skip, 1, failpoint.Inject(f, 0))}}
}

// slowNodes is redlock-slow-nodes: just after an acquire took the key on
// one node, two nodes stop answering for two to three leases, paused
// (SIGSTOP) or, for that client only, slowed past the lease, once to three
// times. A Redlock that waits for them and ignores the time its acquire
// took holds keys that have expired.
func (d *drawer) slowNodes() Fault {
	// Redlock asks the nodes in turn, in their order; most of the time the
	// two stalled are the two it asks last, so that it has taken a
	// majority before it meets them. Other pairs are for locks that ask in
	// another order, or all at once.
	nodes, span, times := d.nodes(2), d.long(), 1+d.rng.IntN(3)
	if d.rng.IntN(4) != 0 {
		nodes = []int{3, 4}
	}
	if d.rng.IntN(3) == 0 {
		c, skip := d.client(), d.skip()
		f := fault.Latency{Client: c, Nodes: nodes, Delay: span / 2}
		return Fault{What: fmt.Sprintf("just after %s's acquire took the key on a node (%s): %s for %s", who(c), hits(c, skip, times), f, span),
			Failpoints: []failpoint.Point{d.failpoint(failpoint.AfterTook, c, skip, times, failpoint.Inject(f, span))}}
	}
	c, skip := failpoint.AnyClient, d.anySkip()
	var fps []failpoint.Point
	for _, n := range nodes {
		fps = append(fps, d.failpoint(failpoint.AfterTook, c, skip, times, failpoint.Inject(fault.PauseNode{Node: n}, span)))
	}
	return Fault{What: fmt.Sprintf("just after %s's acquire took the key on a node (%s): pause lock nodes %v (SIGSTOP) for %s", who(c), hits(c, skip, times), nodes, span),
		Failpoints: fps}
}
