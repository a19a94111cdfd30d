package harness

import (
	"time"

	"github.com/locklab/locklab/models"
)

// Stats count what the workload got done, before, during and after faults.
type Stats struct {
	Acquires int `json:"acquires"` // acquires that succeeded
	Refused  int `json:"refused"`  // acquires refused because the lock was held
	Unknown  int `json:"unknown"`  // operations whose outcome is unknown
	Sections int `json:"sections"` // critical sections entered
	// Failovers is how long each Sentinel promotion took, from the kill.
	Failovers []time.Duration `json:"failovers_ns,omitempty"`
	Before    Phase           `json:"before"` // from the start to the first fault
	During    Phase           `json:"during"` // from the first fault to the last heal
	After     Phase           `json:"after"`  // from the last heal to the end
}

// Phase is the throughput of one stretch of the run.
type Phase struct {
	From     time.Duration `json:"from_ns"`
	To       time.Duration `json:"to_ns"`
	Sections int           `json:"sections"`
	PerSec   float64       `json:"per_sec"`
}

func stats(ops []Op) Stats {
	var s Stats
	last := end(ops)
	faultFrom, faultTo := last, time.Duration(0)
	for _, op := range ops {
		switch op.Kind {
		case KindFault, KindCrash:
			faultFrom = min(faultFrom, op.Call)
			faultTo = max(faultTo, returned(op, last))
		}
	}
	if faultTo == 0 { // no fault: the whole run is "before"
		faultFrom, faultTo = last, last
	}
	s.Before = Phase{From: 0, To: faultFrom}
	s.During = Phase{From: faultFrom, To: faultTo}
	s.After = Phase{From: faultTo, To: last}
	for _, op := range ops {
		if op.Probe {
			continue
		}
		switch {
		case op.Kind == KindAcquire && op.Outcome == models.OK:
			s.Acquires++
		case op.Kind == KindAcquire && op.Outcome == models.Failed:
			s.Refused++
		case op.Kind == KindSection:
			s.Sections++
			for _, p := range []*Phase{&s.Before, &s.During, &s.After} {
				if op.Call >= p.From && op.Call < p.To {
					p.Sections++
				}
			}
		}
		if op.Outcome == models.Unknown {
			s.Unknown++
		}
		if op.Kind == KindFault && op.Fault == FaultFailover {
			s.Failovers = append(s.Failovers, op.Return-op.Call)
		}
	}
	for _, p := range []*Phase{&s.Before, &s.During, &s.After} {
		if d := p.To - p.From; d > 0 {
			p.PerSec = float64(p.Sections) / d.Seconds()
		}
	}
	return s
}
