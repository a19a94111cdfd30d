package checker

import (
	"time"

	"github.com/locklab/locklab/history"
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
	Before    Span            `json:"before"` // from the start to the first fault
	During    Span            `json:"during"` // from the first fault to the last heal
	After     Span            `json:"after"`  // from the last heal to the end
}

// Span is the throughput of one stretch of the run.
type Span struct {
	From     time.Duration `json:"from_ns"`
	To       time.Duration `json:"to_ns"`
	Sections int           `json:"sections"`
	PerSec   float64       `json:"per_sec"`
}

// Measure counts what the workload got done in ops.
func Measure(ops []history.Op) Stats {
	var s Stats
	last := history.Last(ops)
	faultFrom, faultTo := last, time.Duration(0)
	for _, op := range ops {
		switch op.Kind {
		case history.KindFault, history.KindCrash:
			faultFrom = min(faultFrom, op.Call)
			faultTo = max(faultTo, history.Returned(op, last))
		}
	}
	if faultTo == 0 { // no fault: the whole run is "before"
		faultFrom, faultTo = last, last
	}
	s.Before = Span{From: 0, To: faultFrom}
	s.During = Span{From: faultFrom, To: faultTo}
	s.After = Span{From: faultTo, To: last}
	for _, op := range ops {
		if op.Probe || op.Kind == history.KindReply || op.Kind == history.KindRequest || op.Kind == history.KindServer {
			continue
		}
		switch {
		case op.Kind == history.KindAcquire && op.Outcome == models.OK:
			s.Acquires++
		case op.Kind == history.KindAcquire && op.Outcome == models.Failed:
			s.Refused++
		case op.Kind == history.KindSection:
			s.Sections++
			for _, p := range []*Span{&s.Before, &s.During, &s.After} {
				if op.Call >= p.From && op.Call < p.To {
					p.Sections++
				}
			}
		}
		if op.Outcome == models.Unknown {
			s.Unknown++
		}
		if op.Kind == history.KindFault && op.Part == history.PartFailover {
			s.Failovers = append(s.Failovers, op.Return-op.Call)
		}
	}
	for _, p := range []*Span{&s.Before, &s.During, &s.After} {
		if d := p.To - p.From; d > 0 {
			p.PerSec = float64(p.Sections) / d.Seconds()
		}
	}
	return s
}
