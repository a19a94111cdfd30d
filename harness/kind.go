package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/history"
)

// ReferenceDir is where, under Options.Dir, the reference run's files go.
const ReferenceDir = "reference"

// classify sets Kind and KindWhy on every failing check of res, telling the
// lock's own bugs from the damage the scenario's faults do to any lock of
// its kind. The first rule that decides wins:
//
//  1. The history proves the lock's own bug (check.ProvesOwn: two holders no
//     fault touched overlapped, or one's release was refused, with their
//     leases still valid). Its illegal lock and resource verdicts are own,
//     whatever a correct lock does.
//  2. The history excuses the lock (check.Excused: in every overlap the
//     earlier holder was struck by a fault and past its TTL). Its illegal
//     verdicts are inherent: whether a reference run shows the same depends
//     on whether the fault happens to strike a holder, not on the lock.
//  3. The reference lock (Options.Reference) goes through the same scenario
//     with the same options and seed. Where it passes the checker, the
//     failure is own; where it fails it too, inherent, named with the fault
//     and its remedy. A reference verdict that is unknown (a stall of the
//     machine) is tried once more; still unknown, the kind stays empty and
//     KindWhy says why.
//
// Without a reference, rule 3 is skipped and KindWhy says so. classify
// returns an error only when ctx ended.
func classify(ctx context.Context, s Scenario, opts Options, res *Result, ops []history.Op) error {
	var failing []int
	for i, c := range res.Checks {
		if check.Failing(c.Verdict) {
			failing = append(failing, i)
		}
	}
	if len(failing) == 0 {
		return nil
	}
	proof, proved := check.ProvesOwn(ops)
	excuse, excused := check.Excused(ops)
	fault, cure := remedy(s)
	var undecided []int
	for _, i := range failing {
		c := &res.Checks[i]
		switch {
		case proved && c.Verdict == check.Illegal && safety(c.Checker):
			c.Kind, c.KindWhy = check.Own, "no correct lock shows this: "+proof
		case excused && c.Verdict == check.Illegal && safety(c.Checker):
			c.Kind, c.KindWhy = check.Inherent, "any lock of this kind shows this: "+excuse
			if fault != "" {
				c.KindWhy += fmt.Sprintf("; %s beats any lock of this kind; remedy: %s", fault, cure)
			}
		default:
			undecided = append(undecided, i)
		}
	}
	if len(undecided) == 0 {
		return nil
	}
	if opts.Reference == nil || opts.ReferenceRuns < 0 {
		for _, i := range undecided {
			res.Checks[i].KindWhy = "no reference lock to compare with"
		}
		return nil
	}
	var checkers []string
	for _, i := range undecided {
		checkers = append(checkers, res.Checks[i].Checker)
	}
	ref, err := runReference(ctx, s, opts, checkers)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, i := range undecided {
			res.Checks[i].KindWhy = "the reference lock could not run: " + err.Error()
		}
		return nil
	}
	res.Reference = ref.Verdicts
	for _, i := range undecided {
		c := &res.Checks[i]
		rc := checkOf(ref, c.Checker)
		if safety(c.Checker) && rc.Verdict == check.OK {
			// Mutual exclusion is one property, seen by two checkers: once
			// the reference's holders overlapped, whether that overlap
			// also lost an update is luck of the interleaving.
			for _, name := range []string{check.CheckLock, check.CheckResource} {
				if other := checkOf(ref, name); other.Verdict == check.Illegal {
					rc = other
				}
			}
		}
		switch {
		case rc.Verdict == check.OK:
			c.Kind, c.KindWhy = check.Own, "the reference lock stays ok in the same scenario and seed"
		case check.Failing(rc.Verdict) && fault == "":
			c.Kind, c.KindWhy = check.Inherent, fmt.Sprintf("the reference lock is %s too in the same scenario and seed, with no fault injected", rc.Verdict)
		case check.Failing(rc.Verdict):
			c.Kind, c.KindWhy = check.Inherent, fmt.Sprintf("the reference lock is %s too in the same scenario and seed: "+
				"%s beats any lock of this kind; remedy: %s", rc.Verdict, fault, cure)
		default:
			c.KindWhy = fmt.Sprintf("the reference lock's verdict is %s twice (%s)", rc.Verdict, rc.Detail)
		}
	}
	return nil
}

// safety reports whether checker judges mutual exclusion (the lock) or the
// data it protects (the resource).
func safety(checker string) bool { return checker == check.CheckLock || checker == check.CheckResource }

// runReference puts opts.Reference through s with the options of the run
// it is compared with, and once more when a verdict on checkers is unknown.
func runReference(ctx context.Context, s Scenario, opts Options, checkers []string) (*Result, error) {
	ropts := opts
	ropts.Lock, ropts.Reference = "reference", nil
	if opts.Dir != "" {
		ropts.Dir = filepath.Join(opts.Dir, ReferenceDir)
	}
	var ref *Result
	for try := 1; try <= 2; try++ {
		logf(opts.Log, "%s: running the reference lock (try %d) to tell own failures from inherent ones", s.Name, try)
		var err error
		ref, err = Run(ctx, s, opts.Reference, ropts)
		if err != nil && !errors.Is(err, ErrNotExercised) {
			return nil, err
		}
		if !anyUnknown(ref, checkers) {
			break
		}
	}
	return ref, nil
}

func anyUnknown(r *Result, checkers []string) bool {
	for _, name := range checkers {
		if checkOf(r, name).Verdict == check.Unknown {
			return true
		}
	}
	return false
}

// checkOf finds a checker's check in r; a missing one is unknown.
func checkOf(r *Result, checker string) check.Check {
	for _, c := range r.Checks {
		if c.Checker == checker {
			return c
		}
	}
	return check.Check{Checker: checker, Verdict: check.Unknown, Detail: "no such check"}
}

// The faults remedy names, as they read in KindWhy.
const (
	faultFailover     = "a failover"
	faultNodeRestart  = "a restart of a lock node"
	faultClockJump    = "a clock jump on a lock node"
	faultNodePause    = "a pause of a lock node"
	faultClientPause  = "a client pause"
	faultPartition    = "a client partition"
	faultSlowNetwork  = "a slow network"
	faultLostReply    = "a lost reply"
	faultClockSkew    = "a skewed client clock"
	faultClientCrash  = "a client crash"
	faultSlowWork     = "slow work"
	faultEarlyRelease = "releasing the lock before the commit"
)

const fencing = "fencing tokens checked by the resource"

// remedy names the fault of s that beats any lock and what closes the hole
// it opens; "" when s has none. The most specific fault wins: a failover
// over the pause that times it, a node restart over the partition that sets
// it up.
func remedy(s Scenario) (fault, cure string) {
	if s.Workload.ReleaseBeforeCommit {
		return faultEarlyRelease, "commit, then unlock"
	}
	var found []string
	for _, sf := range s.Faults {
		found = append(found, faultName(sf.Fault))
	}
	for _, fp := range s.Failpoints {
		switch fp.Action.Kind {
		case ActionFault:
			found = append(found, faultName(fp.Action.Fault))
		case ActionPause:
			found = append(found, faultClientPause)
		case ActionCrash:
			found = append(found, faultClientCrash)
		case ActionDrop:
			found = append(found, faultLostReply)
		case ActionSleep:
			if isCommandPoint(fp.Name) {
				found = append(found, faultSlowNetwork) // a delayed command
			} else {
				found = append(found, faultSlowWork)
			}
		}
	}
	ranked := []struct{ fault, cure string }{
		{faultFailover, "WAIT narrows the window (failover-wait shows its limit); Redlock or " + fencing + " close it"},
		{faultNodeRestart, "restart a node only after a TTL, or appendfsync always"},
		{faultClockJump, "slewing (not stepping) time sync, or " + fencing},
		{faultNodePause, fencing},
		{faultClientPause, fencing},
		{faultPartition, fencing},
		{faultSlowNetwork, fencing},
		{faultLostReply, fencing},
		{faultClockSkew, fencing},
		{faultClientCrash, fencing},
		{faultSlowWork, "a watchdog that renews the lease, and " + fencing},
	}
	for _, r := range ranked {
		if slices.Contains(found, r.fault) {
			return r.fault, r.cure
		}
	}
	return "", ""
}

// faultName is the name remedy knows f by; "" for a fault that only sets
// the stage (a preferred replica).
func faultName(f Fault) string {
	switch f.(type) {
	case KillMaster, CutReplication:
		return faultFailover
	case KillNode:
		return faultNodeRestart
	case ClockJump:
		return faultClockJump
	case PauseNode:
		return faultNodePause
	case Partition:
		return faultPartition
	case Latency, BlackHole:
		return faultSlowNetwork
	case ClockSkew:
		return faultClockSkew
	}
	return ""
}
