package footprint

import (
	"fmt"
	"sync"
	"time"
)

// Outlasts is how much longer than the TTL a run told a lock a learned
// lease must be to be the lock's own (and to stretch a scenario timed
// against that TTL): a lease within it is the one the lock was told, give
// or take a library's rounding.
const Outlasts = 1.5

// Lease is the lease a lock's runs are timed against: one the user gives
// (check -ttl), or one learned from the lock's own requests by the first
// run that showed it to be longer than the TTL the lock was told. Shared
// by the runs of one lock (a suite's, an exploration's), it lets every
// later run be timed against it from its start rather than be made twice
// (runner.Options.Lease). The zero Lease knows none yet; a Lease is safe
// for concurrent use.
type Lease struct {
	mu    sync.Mutex
	lease time.Duration
	slack time.Duration // how much sooner the server may free it (Footprint.Slack)
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

// Learn keeps fp's lease when it outlasts told, the TTL the run that
// showed it told the lock: a lease of the lock's own, which later runs
// are timed against. A lease that follows what the lock is told predicts
// nothing for a scenario of another TTL, and is not kept; neither is any
// once a lease is given or known.
func (l *Lease) Learn(fp Footprint, told time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lease == 0 && Longer(fp.Lease-fp.Slack, told) {
		l.lease, l.slack, l.from = fp.Lease, fp.Slack, fp.LeaseFrom
	}
}

// Longer reports whether a learned lease outlasts ttl by the margin.
func Longer(lease, ttl time.Duration) bool { return float64(lease) > Outlasts*float64(ttl) }

// Against says what a run whose scenario is timed against ttl is timed
// against by l: stretch, the lease to stretch it to (0: the scenario's
// own), and the sentence that says so; known says l knows a lease, and
// given that the user gave it.
func (l *Lease) Against(ttl time.Duration) (stretch time.Duration, text string, known, given bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lease == 0:
		return 0, "", false, false
	case l.given && l.lease > ttl, !l.given && Longer(l.lease-l.slack, ttl):
		return l.lease, fmt.Sprintf("timed against %s: the scenario's %d ms stretched %.3g×",
			l.name(), ttl.Milliseconds(), float64(l.lease)/float64(ttl)), true, l.given
	}
	return 0, fmt.Sprintf("timed against the scenario's %d ms: %s is no longer, and a scenario is never shrunk", ttl.Milliseconds(), l.name()), true, l.given
}

// LeaseText is f's lease in a page's words, with its slack as a range:
// "1000 ms", "1000–2000 ms".
func (f Footprint) LeaseText() string { return leaseText(f.Lease, f.Slack) }

// leaseText is a lease in a page's words, with its slack as a range.
func leaseText(lease, slack time.Duration) string {
	if slack > 0 {
		return fmt.Sprintf("%d–%d ms", (lease - slack).Milliseconds(), lease.Milliseconds())
	}
	return fmt.Sprintf("%d ms", lease.Milliseconds())
}
