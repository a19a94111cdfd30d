package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/footprint"
)

// TestStretch: every length timed against the lease scales by lease/TTL,
// what is not (the timeout, the retry, a fault that lasts the whole run)
// stays, and a lease no longer than the TTL leaves the scenario alone.
func TestStretch(t *testing.T) {
	s := Scenario{Name: "x",
		Workload: Workload{TTL: 200 * time.Millisecond, Work: 10 * time.Millisecond, Timeout: 500 * time.Millisecond, Retry: 4 * time.Millisecond},
		Failpoints: []failpoint.Point{
			{Name: failpoint.CriticalSection, Action: failpoint.Pause(500 * time.Millisecond)},
			{Name: failpoint.CriticalSection, Action: failpoint.SleepUntil(failpoint.Acquired, time.Second)},
			{Name: failpoint.Acquired, Action: failpoint.Inject(fault.ClockSkew{By: time.Second}, 600*time.Millisecond)},
			{Name: failpoint.Acquired, Action: failpoint.Crash()},
		},
		Faults: []ScheduledFault{
			{At: 300 * time.Millisecond, For: time.Second, Fault: fault.Latency{Delay: 20 * time.Millisecond}},
			{For: failpoint.WholeRun, Fault: fault.Partition{Nodes: []int{3}}},
		},
		MinDuration: time.Second,
	}
	for _, tc := range []struct {
		name  string
		lease time.Duration
		check func(t *testing.T, got Scenario)
	}{
		{"shorter lease: as it is", 100 * time.Millisecond, func(t *testing.T, got Scenario) {
			if got.Workload.TTL != s.Workload.TTL || got.Failpoints[0].Action.For != 500*time.Millisecond || got.Description != "" {
				t.Errorf("shrunk or changed: %+v", got)
			}
		}},
		{"five times the TTL", time.Second, func(t *testing.T, got Scenario) {
			w := got.Workload
			for _, c := range []struct {
				what      string
				got, want time.Duration
			}{
				{"TTL", w.TTL, time.Second},
				{"work", w.Work, 50 * time.Millisecond},
				{"duration (the default 2 s)", w.Duration, 10 * time.Second},
				{"timeout", w.Timeout, 500 * time.Millisecond},
				{"retry", w.Retry, 4 * time.Millisecond},
				{"handover (the default)", got.Handover, 500 * time.Millisecond},
				{"min duration", got.MinDuration, 5 * time.Second},
				{"pause", got.Failpoints[0].Action.For, 2500 * time.Millisecond},
				{"sleep's bound", got.Failpoints[1].Action.For, 5 * time.Second},
				{"a failpoint fault's heal", got.Failpoints[2].Action.For, 3 * time.Second},
				{"its skew", got.Failpoints[2].Action.Fault.(fault.ClockSkew).By, 5 * time.Second},
				{"crash", got.Failpoints[3].Action.For, 0},
				{"scheduled at", got.Faults[0].At, 1500 * time.Millisecond},
				{"scheduled for", got.Faults[0].For, 5 * time.Second},
				{"latency", got.Faults[0].Fault.(fault.Latency).Delay, 100 * time.Millisecond},
				{"the whole run", got.Faults[1].For, failpoint.WholeRun},
			} {
				if c.got != c.want {
					t.Errorf("%s: %s, want %s", c.what, c.got, c.want)
				}
			}
			if s.Failpoints[0].Action.For != 500*time.Millisecond || s.Faults[0].At != 300*time.Millisecond {
				t.Error("the scenario stretched was changed too")
			}
			if !strings.Contains(got.Description, "Stretched to a lease of 1000 ms") {
				t.Errorf("description %q does not say it was stretched", got.Description)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, s.Stretch(tc.lease)) })
	}
}

// TestLeaseTiming: a given lease times every scenario whose TTL is
// shorter; a learned one only once it outlasts the TTL the lock was told
// by half, and only a scenario it outlasts so; a lease that follows what
// the lock is told is not kept.
func TestLeaseTiming(t *testing.T) {
	s := Scenario{Name: "x", Workload: Workload{TTL: 200 * time.Millisecond}}
	long := Scenario{Name: "y", Workload: Workload{TTL: 6 * time.Second}}
	fp := func(lease, slack time.Duration) footprint.Footprint {
		return footprint.Footprint{Lease: lease, Slack: slack, LeaseFrom: "SET app:lock … NX PX 1000"}
	}
	for _, tc := range []struct {
		name    string
		lease   *footprint.Lease
		learn   []footprint.Footprint // each learned by a run told 200 ms
		s       Scenario
		known   bool
		stretch float64
		text    string
	}{
		{"nothing known", &footprint.Lease{}, nil, s, false, 1, ""},
		{"given", footprint.GivenLease(time.Second), nil, s, true, 5, "timed against the given lease 1000 ms: the scenario's 200 ms stretched 5×"},
		{"given, learned ignored", footprint.GivenLease(time.Second), []footprint.Footprint{fp(4*time.Second, 0)}, s, true, 5, "given lease 1000 ms"},
		{"given, shorter", footprint.GivenLease(100 * time.Millisecond), nil, s, true, 1, "no longer, and a scenario is never shrunk"},
		{"learned", &footprint.Lease{}, []footprint.Footprint{fp(time.Second, 0)}, s, true, 5,
			"timed against the learned lease 1000 ms (from SET app:lock … NX PX 1000): the scenario's 200 ms stretched 5×"},
		{"learned, the first kept", &footprint.Lease{}, []footprint.Footprint{fp(time.Second, 0), fp(2*time.Second, 0)}, s, true, 5, "1000 ms"},
		{"the told TTL is not kept", &footprint.Lease{}, []footprint.Footprint{fp(200*time.Millisecond, 0), fp(time.Second, 0)}, s, true, 5, "1000 ms"},
		{"within the margin is not kept", &footprint.Lease{}, []footprint.Footprint{fp(300*time.Millisecond, 0)}, s, false, 1, ""},
		{"slack counts against it", &footprint.Lease{}, []footprint.Footprint{fp(time.Second, 800*time.Millisecond)}, s, false, 1, ""},
		{"slack shows as a range", &footprint.Lease{}, []footprint.Footprint{fp(2*time.Second, time.Second)}, s, true, 10, "lease 1000–2000 ms"},
		{"learned, a longer scenario", &footprint.Lease{}, []footprint.Footprint{fp(time.Second, 0)}, long, true, 1, "timed against the scenario's 6000 ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range tc.learn {
				tc.lease.Learn(f, 200*time.Millisecond)
			}
			got, timing, known := timeAgainst(tc.lease, tc.s)
			if known != tc.known || timing.Stretch != tc.stretch || !strings.Contains(timing.Text, tc.text) {
				t.Errorf("known %v, stretch %g, %q; want %v, %g, %q", known, timing.Stretch, timing.Text, tc.known, tc.stretch, tc.text)
			}
			if want := time.Duration(float64(tc.s.Workload.TTL) * tc.stretch); got.Workload.TTL != want || timing.Lease != want {
				t.Errorf("timed against %s, TTL %s; want %s", timing.Lease, got.Workload.TTL, want)
			}
		})
	}
}

// TestDescribe: what a run of a lock that learns its footprint says of its
// timing, from what it learned.
func TestDescribe(t *testing.T) {
	scenario := Timing{Lease: 200 * time.Millisecond, Stretch: 1, Source: TimedScenario}
	stretched := Timing{Lease: time.Second, Stretch: 5, Source: TimedLearned, Text: "timed against the learned lease 1000 ms"}
	fp := func(lease time.Duration) footprint.Footprint {
		return footprint.Footprint{Lease: lease, LeaseFrom: "SET k … PX"}
	}
	for _, tc := range []struct {
		name string
		t    Timing
		fp   footprint.Footprint
		want string
	}{
		{"nothing learned", scenario, footprint.Footprint{}, "lease not learned: timed against the scenario's 200 ms"},
		{"the told lease", scenario, fp(200 * time.Millisecond), "timed against the scenario's 200 ms: the learned lease 200 ms (from SET k … PX) is within 1.5× of it"},
		{"a shorter lease", scenario, fp(50 * time.Millisecond), "is shorter, and a scenario is never shrunk"},
		{"stretched, as learned", stretched, fp(time.Second), "timed against the learned lease 1000 ms"},
		{"stretched, and it ran ahead", stretched, fp(5 * time.Second), "; in this run it asked for 5000 ms (from SET k … PX), past that lease"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			timing := tc.t
			describe(&timing, tc.fp)
			if !strings.Contains(timing.Text, tc.want) {
				t.Errorf("%q, want %q in it", timing.Text, tc.want)
			}
		})
	}
}
