package runner

import (
	"context"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
)

// The lag meter asks to be woken every lagTick and records each wake-up
// that came more than lagAbove late. A goroutine of an idle machine wakes
// within tens of microseconds; one that waited milliseconds for a core
// tells that every goroutine of the run could have waited as long.
const (
	lagTick  = 5 * time.Millisecond
	lagAbove = 2 * time.Millisecond
)

// meterLag measures, until the returned stop is first called, how late the
// machine runs the harness's timers; stop returns the stretches it found
// late, in the run's time (now), each time it is called.
func meterLag(ctx context.Context, now func() time.Duration) (stop func() []history.Span) {
	ctx, cancel := context.WithCancel(ctx)
	var late []history.Span
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(lagTick)
		defer t.Stop()
		for {
			due := now() + lagTick
			t.Reset(lagTick)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if woke := now(); woke-due > lagAbove {
				late = append(late, history.Span{From: due, To: woke})
			}
		}
	}()
	return sync.OnceValue(func() []history.Span {
		cancel()
		wg.Wait()
		return late
	})
}
