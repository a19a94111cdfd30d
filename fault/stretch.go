package fault

import "time"

// Stretcher is a Fault with a length timed against the lease (a skew or a
// jump past it, a latency well inside it). A scenario stretched to a
// longer lease (runner.Scenario.Stretch) scales that length by k, so that
// the fault means against the lease what it meant against the TTL it was
// written for. A fault without one (a crash, a partition, whose length is
// its schedule's) is left as it is.
type Stretcher interface {
	Fault
	// Stretch is the fault with its lease-timed length scaled by k (> 1).
	Stretch(k float64) Fault
}

// Scale is d scaled by k, to the millisecond: the one rounding every
// stretched length shares.
func Scale(d time.Duration, k float64) time.Duration {
	return time.Duration(float64(d) * k).Round(time.Millisecond)
}

// Stretch: the skew runs ahead as many leases as before.
func (f ClockSkew) Stretch(k float64) Fault { f.By = Scale(f.By, k); return f }

// Stretch: the jump shortens the node's keys by as many leases as before.
func (f ClockJump) Stretch(k float64) Fault { f.By = Scale(f.By, k); return f }

// Stretch: the server's clock jumps as many leases as before.
func (f ClockJumpServer) Stretch(k float64) Fault { f.By = Scale(f.By, k); return f }

// Stretch: the delay is the same share of the lease (at most an eighth
// in explore's draws, within which a watchdog still renews in time).
func (f Latency) Stretch(k float64) Fault { f.Delay = Scale(f.Delay, k); return f }
