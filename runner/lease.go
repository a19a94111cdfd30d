package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/locklab/locklab/checker"
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

// timeAgainst is s timed against l: stretched to it where it is longer than
// s's TTL (a given one), or outlasts it (a learned one), else s as it is.
// ok says the lease is known; Timing.Text is then filled.
func timeAgainst(l *footprint.Lease, s Scenario) (Scenario, *Timing, bool) {
	ttl := s.Workload.withDefaults().TTL
	t := &Timing{Lease: ttl, Stretch: 1, Source: TimedScenario}
	lease, text, known, given := l.Against(ttl)
	t.Text = text
	if lease == 0 {
		return s, t, known
	}
	t.Lease, t.Stretch, t.Source = lease, float64(lease)/float64(ttl), TimedLearned
	if given {
		t.Source = TimedGiven
	}
	return s.Stretch(lease), t, true
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
	from := fmt.Sprintf("the learned lease %s (from %s)", fp.LeaseText(), fp.LeaseFrom)
	switch {
	case t.Text != "" && t.Source != TimedScenario && footprint.Longer(fp.Lease-fp.Slack, t.Lease):
		// A lock that asks for a multiple of what it is told: its
		// lease ran ahead of the stretch. Said, not chased.
		t.Text += fmt.Sprintf("; in this run it asked for %s (from %s), past that lease", fp.LeaseText(), fp.LeaseFrom)
	case t.Text != "":
	case fp.Lease == 0:
		t.Text = fmt.Sprintf("lease not learned: timed against the scenario's %d ms", t.Lease.Milliseconds())
	case fp.Lease < t.Lease:
		t.Text = fmt.Sprintf("timed against the scenario's %d ms: %s is shorter, and a scenario is never shrunk", t.Lease.Milliseconds(), from)
	default:
		t.Text = fmt.Sprintf("timed against the scenario's %d ms: %s is within %.1f× of it", t.Lease.Milliseconds(), from, footprint.Outlasts)
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
		handover = checker.DefaultHandover
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
