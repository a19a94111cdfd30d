package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/history"
)

// LearnDir is where, under Options.Dir, a run that learned a lease longer
// than the one its scenario was timed against leaves its files, before it
// is made again on the scenario stretched to that lease: the evidence of
// what was learned, and of a run whose faults fell short of the lease.
const LearnDir = "learning"

// outlasts is how much longer than the TTL a scenario was timed against a
// learned lease must be to stretch the scenario: a lease within it is the
// one the lock was told, give or take a library's rounding.
const outlasts = 1.5

// Lease is the lease a lock's runs are timed against: one the user gives
// (check -ttl), or one learned from the lock's own requests (a lock
// program's footprint) by the first run that showed it to be longer than
// the TTL the lock was told. Shared by the runs of one lock (a suite's,
// an exploration's), it lets every later run be timed against it from
// its start rather than be made twice. The zero Lease knows none yet; a
// Lease is safe for concurrent use.
type Lease struct {
	mu    sync.Mutex
	lease time.Duration
	slack time.Duration // how much sooner the server may free it (footprint.Footprint.Slack)
	from  string        // the request it was learned from
	given bool
}

// GivenLease is a lease the user states: every run is timed against it
// where it is longer than the scenario's TTL, and nothing learned replaces
// it.
func GivenLease(d time.Duration) *Lease { return &Lease{lease: d, given: true} }

// String names the lease for a page: "the learned lease 1000 ms (from SET
// … PX 1000)", "the given lease 1000 ms", or "" while none is known.
func (l *Lease) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.name()
}

// name is String with l.mu held.
func (l *Lease) name() string {
	switch {
	case l.lease == 0:
		return ""
	case l.given:
		return fmt.Sprintf("the given lease %d ms", l.lease.Milliseconds())
	}
	return fmt.Sprintf("the learned lease %s (from %s)", leaseText(l.lease, l.slack), l.from)
}

// learn keeps fp's lease when it outlasts told, the TTL the run that
// showed it told the lock: a lease of the lock's own, which later runs
// are timed against. A lease that follows what the lock is told predicts
// nothing for a scenario of another TTL, and is not kept; neither is any
// once a lease is given or known.
func (l *Lease) learn(fp footprint.Footprint, told time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lease == 0 && longer(fp.Lease-fp.Slack, told) {
		l.lease, l.slack, l.from = fp.Lease, fp.Slack, fp.LeaseFrom
	}
}

// longer reports whether a learned lease outlasts ttl by the margin.
func longer(lease, ttl time.Duration) bool { return float64(lease) > outlasts*float64(ttl) }

// timing is s timed against l: stretched to it where it is longer than
// s's TTL (a given one), or outlasts it (a learned one), else s as it is.
// ok says the lease is known; Timing.Text is then filled.
func (l *Lease) timing(s Scenario) (Scenario, *Timing, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ttl := s.Workload.withDefaults().TTL
	t := &Timing{Lease: ttl, Stretch: 1, Source: TimedScenario}
	switch {
	case l.lease == 0:
		return s, t, false
	case l.given && l.lease > ttl, !l.given && longer(l.lease-l.slack, ttl):
	default:
		t.Text = fmt.Sprintf("timed against the scenario's %d ms: %s is no longer, and a scenario is never shrunk", ttl.Milliseconds(), l.name())
		return s, t, true
	}
	t.Lease, t.Stretch, t.Source = l.lease, float64(l.lease)/float64(ttl), TimedLearned
	if l.given {
		t.Source = TimedGiven
	}
	t.Text = fmt.Sprintf("timed against %s: the scenario's %d ms stretched %.3g×", l.name(), ttl.Milliseconds(), t.Stretch)
	return s.Stretch(l.lease), t, true
}

// Sources of a Timing.
const (
	TimedScenario = "scenario" // the scenario's own TTL
	TimedLearned  = "learned"  // a lease learned from the lock's requests
	TimedGiven    = "given"    // a lease the user gave
)

// Timing says what a run's lease-timed lengths (its TTL, work, length,
// pauses, sleeps, faults' times) were timed against.
type Timing struct {
	// Lease is the lease they were timed against: the scenario's TTL, or
	// the longer lease the scenario was stretched to.
	Lease time.Duration `json:"lease_ns"`
	// Stretch is the factor they were scaled by: 1 when not stretched.
	Stretch float64 `json:"stretch"`
	// Source is TimedScenario, TimedLearned or TimedGiven.
	Source string `json:"source"`
	// Text says it for a page: "timed against the learned lease 1000 ms
	// (from SET app:lock … NX PX 1000): the scenario's 200 ms stretched
	// 5×", "lease not learned: timed against the scenario's 200 ms".
	Text string `json:"text"`
}

// scaled is opts for a run timed by t: a workload length the caller set
// (Options.Duration) is stretched with the scenario's own.
func (t *Timing) scaled(opts Options) Options {
	if t.Stretch > 1 && opts.Duration > 0 {
		opts.Duration = fault.Scale(opts.Duration, t.Stretch)
	}
	return opts
}

// leaseText is a lease in a page's words, with its slack as a range.
func leaseText(lease, slack time.Duration) string {
	if slack > 0 {
		return fmt.Sprintf("%d–%d ms", (lease - slack).Milliseconds(), lease.Milliseconds())
	}
	return fmt.Sprintf("%d ms", lease.Milliseconds())
}

// learned is what the run of ops learned of the lock's lease: its end's
// footprint, or the zero one.
func learned(ops []history.Op) footprint.Footprint {
	if e := history.EndOf(ops); e != nil && e.Footprint != nil {
		return *e.Footprint
	}
	return footprint.Footprint{}
}

// describe fills t.Text, for a run of a lock that learns its footprint,
// from what the run learned (fp) where the lease it was timed against
// said nothing.
func describe(t *Timing, fp footprint.Footprint) {
	from := fmt.Sprintf("the learned lease %s (from %s)", leaseText(fp.Lease, fp.Slack), fp.LeaseFrom)
	switch {
	case t.Text != "" && t.Source != TimedScenario && longer(fp.Lease-fp.Slack, t.Lease):
		// A lock that asks for a multiple of what it is told: its
		// lease ran ahead of the stretch. Said, not chased.
		t.Text += fmt.Sprintf("; in this run it asked for %s (from %s), past that lease", leaseText(fp.Lease, fp.Slack), fp.LeaseFrom)
	case t.Text != "":
	case fp.Lease == 0:
		t.Text = fmt.Sprintf("lease not learned: timed against the scenario's %d ms", t.Lease.Milliseconds())
	case fp.Lease < t.Lease:
		t.Text = fmt.Sprintf("timed against the scenario's %d ms: %s is shorter, and a scenario is never shrunk", t.Lease.Milliseconds(), from)
	default:
		t.Text = fmt.Sprintf("timed against the scenario's %d ms: %s is within %.1f× of it", t.Lease.Milliseconds(), from, outlasts)
	}
}

// setAside moves the files a run wrote into dir into dir/LearnDir, so
// that the run made again in dir starts from an empty folder.
func setAside(dir string) error {
	if dir == "" {
		return nil
	}
	tmp := dir + ".learning"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.Rename(dir, tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, LearnDir))
}

// Stretch is s timed against lease: where lease is longer than its TTL,
// every length s times against the TTL (the TTL itself, the work, the
// workload's length, a failpoint's pause, sleep or fault, a scheduled
// fault's time and length, a fault's own lease-timed length, the handover
// bound and the shortest workload) scaled by lease/TTL, so that a pause of
// two and a half TTLs is two and a half leases. What is not timed against
// the lease stays: the reply timeout, the retry's wait, the client count.
// A lease no longer than the TTL leaves s as it is: a scenario is never
// shrunk below its own timing.
func (s Scenario) Stretch(lease time.Duration) Scenario {
	w := s.Workload.withDefaults()
	if lease <= w.TTL {
		return s
	}
	k := float64(lease) / float64(w.TTL)
	scale := func(d time.Duration) time.Duration {
		if d >= failpoint.WholeRun {
			return d
		}
		return fault.Scale(d, k)
	}
	s.Description += fmt.Sprintf(" (Stretched to a lease of %d ms: every length timed against the lease is %.3g× the above.)", lease.Milliseconds(), k)
	s.Workload.TTL, s.Workload.Work, s.Workload.Duration = lease, scale(s.Workload.Work), scale(w.Duration)
	handover := s.Handover
	if handover == 0 {
		handover = check.DefaultHandover
	}
	s.Handover, s.MinDuration = scale(handover), scale(s.MinDuration)
	points := make([]failpoint.Point, len(s.Failpoints))
	for i, p := range s.Failpoints {
		p.Action.For = scale(p.Action.For)
		p.Action.Fault = stretchFault(p.Action.Fault, k)
		points[i] = p
	}
	faults := make([]ScheduledFault, len(s.Faults))
	for i, f := range s.Faults {
		f.At, f.For, f.Fault = scale(f.At), scale(f.For), stretchFault(f.Fault, k)
		faults[i] = f
	}
	s.Failpoints, s.Faults = points, faults
	return s
}

// stretchFault is f with its lease-timed length scaled by k, when it has
// one (fault.Stretcher).
func stretchFault(f fault.Fault, k float64) fault.Fault {
	if st, ok := f.(fault.Stretcher); ok {
		return st.Stretch(k)
	}
	return f
}
