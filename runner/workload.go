package runner

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// worker is one client running the workload.
type worker struct {
	c       *harness.Client
	lock    harness.Locker
	w       Workload
	h       *history.Recorder
	rng     *rand.Rand
	stop    *atomic.Bool // set when the time limit is reached: start no new cycle
	probe   bool
	inCycle atomic.Bool
}

// run loops acquire → critical section → release until stop or the client's end.
func (w *worker) run(ctx context.Context) {
	for !w.stop.Load() && ctx.Err() == nil && !w.c.Crashed() {
		if w.c.Failpoint(ctx, failpoint.BeforeAcquire) != nil {
			return
		}
		lease, ok := w.acquire(ctx, false)
		if !ok {
			return
		}
		w.inCycle.Store(true)
		if w.c.Failpoint(ctx, failpoint.Acquired) != nil {
			return
		}
		switch w.w.Resource {
		case MariaDBResource, PostgresResource:
			if !w.sectionTx(ctx, lease) {
				w.release(ctx, lease, false)
			}
		case EtcdResource:
			w.sectionEtcd(ctx, lease)
			w.release(ctx, lease, false)
		default:
			w.section(ctx, lease)
			w.release(ctx, lease, false)
		}
		w.inCycle.Store(false)
		// Think time: a real process does other work between requests,
		// which also gives waiting clients their turn.
		w.c.Sleep(ctx, w.retryDelay())
	}
}

// acquire retries a refused or unknown acquire after a random delay until it
// gets the lock. An outer acquire gives up when the workload stops; a nested
// one does not, because its caller already holds the lock and is inside its
// critical section.
func (w *worker) acquire(ctx context.Context, nested bool) (harness.Lease, bool) {
	for {
		if (!nested && w.stop.Load()) || ctx.Err() != nil || w.c.Crashed() {
			return nil, false
		}
		call := w.h.Now()
		actx, leave := w.c.Enter(ctx, failpoint.PhaseAcquire)
		lease, err := w.lock.Acquire(actx, w.w.Key)
		leave()
		op := history.Op{Client: w.c.ID(), Kind: history.KindAcquire, Key: w.w.Key, Call: call, Return: w.h.Now(), Nested: nested, Probe: w.probe}
		switch {
		case err == nil:
			op.Outcome, op.Token = models.OK, lease.Token()
			if at, ok := w.c.TookAt(actx); ok {
				op.Took = at
			}
		case errors.Is(err, harness.ErrNotAcquired):
			op.Outcome = models.Failed
			if err != harness.ErrNotAcquired {
				op.Error = err.Error() // the lock's own reason, e.g. no replica acknowledged it
			}
		default:
			op.Outcome, op.Return, op.Error = models.Unknown, history.NeverReturned, err.Error()
		}
		if w.c.Crashed() {
			// A crashed client never saw the outcome.
			op.Outcome, op.Return = models.Unknown, history.NeverReturned
		}
		w.h.Add(op)
		if op.Outcome == models.OK {
			return lease, true
		}
		if w.c.Crashed() {
			return nil, false
		}
		w.c.Sleep(ctx, w.retryDelay())
	}
}

// retryDelay is uniform in [Retry/2, 3·Retry/2), so clients do not retry in step.
func (w *worker) retryDelay() time.Duration {
	d := int64(w.w.Retry)
	return time.Duration(d/2 + w.rng.Int64N(d+1))
}

// release gives the lease back and records what the client saw, which it
// returns: nil, or Release's error.
func (w *worker) release(ctx context.Context, lease harness.Lease, nested bool) error {
	if w.c.Crashed() {
		return harness.ErrCrashed
	}
	op := history.Op{Client: w.c.ID(), Kind: history.KindRelease, Key: w.w.Key, Call: w.h.Now(), Nested: nested, Probe: w.probe, Token: lease.Token()}
	// The hold ends here, at the call, for the checkers; a live view is
	// told now, not when the release returns (a paused release may not).
	w.h.Begin(op)
	rctx, leave := w.c.Enter(ctx, failpoint.PhaseRelease)
	err := lease.Release(rctx)
	leave()
	op.Return = w.h.Now()
	switch {
	case err == nil:
		op.Outcome = models.OK
	case errors.Is(err, harness.ErrNotHeld):
		op.Outcome, op.Error = models.Failed, err.Error()
	default:
		op.Outcome, op.Return, op.Error = models.Unknown, history.NeverReturned, err.Error()
	}
	if w.c.Crashed() {
		op.Outcome, op.Return = models.Unknown, history.NeverReturned
	}
	w.h.Add(op)
	return err
}

// work is the critical section's work, once the stock is read: the
// failpoint of the critical section, then the workload's work. It says
// false, with op's error, when either was cut short (a crash, the run's
// end), and the section must not write.
func (w *worker) work(ctx context.Context, op *history.Op) bool {
	if err := w.c.Failpoint(ctx, failpoint.CriticalSection); err != nil {
		op.Error = err.Error()
		return false
	}
	if err := w.c.Sleep(ctx, w.w.Work); err != nil {
		op.Error = err.Error()
		return false
	}
	return true
}

// section is the critical section: read the stock, work, maybe take the lock
// again, and write stock−1 unless sold out.
func (w *worker) section(ctx context.Context, lease harness.Lease) {
	ctx, leave := w.c.Enter(ctx, failpoint.PhaseSection)
	defer leave()
	inv := w.c.Inventory()
	op := history.Op{Client: w.c.ID(), Kind: history.KindSection, Call: w.h.Now(), Token: lease.Token(), Result: models.NoWrite}
	observed, err := inv.Read(ctx, lease.Token())
	if err != nil {
		// Nothing was read (or a stale token was refused), so the resource
		// saw no section.
		return
	}
	defer func() {
		op.Return = w.h.Now()
		w.h.Add(op)
	}()
	op.Observed = observed
	if !w.work(ctx, &op) {
		return
	}
	if w.w.Nested {
		inner, ok := w.acquire(ctx, true)
		if !ok {
			op.Error = "nested acquire did not succeed"
			return
		}
		w.release(ctx, inner, true)
	}
	if observed <= 0 {
		return
	}
	op.Written = observed - 1
	var wrote bool
	if _, ok := lease.(harness.OptimisticLease); ok {
		wrote, err = inv.CompareAndSet(ctx, observed, op.Written)
	} else {
		wrote, err = inv.Write(ctx, op.Written, lease.Token())
	}
	switch {
	case err == nil && wrote:
		op.Result = models.Wrote
	case err == nil:
		op.Result = models.Rejected
	case errors.Is(err, harness.ErrNotSent), errors.Is(err, harness.ErrClosed):
		op.Error = err.Error()
	default:
		op.Result, op.Error = models.WriteUnknown, err.Error()
	}
}
