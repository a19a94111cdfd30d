package runner

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
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

// lagMeter measures how late the machine runs the run.
type lagMeter struct {
	now  func() time.Duration
	stop func() []history.Span
	// late is how much of the run so far the machine ran late, in
	// nanoseconds: per tick, the more of the meter's own lateness and the
	// time the kernel saw some task of the machine wait for a core (Linux's
	// CPU pressure), which covers the servers and lock programs too.
	late atomic.Int64
}

// meterLag measures, until Stop is first called, how late the machine runs
// the harness's timers and the machine's tasks.
func meterLag(ctx context.Context, now func() time.Duration) *lagMeter {
	m := &lagMeter{now: now}
	ctx, cancel := context.WithCancel(ctx)
	var late []history.Span
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(lagTick)
		defer t.Stop()
		waited, known := cpuWaited()
		for {
			due := now() + lagTick
			t.Reset(lagTick)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			woke := now()
			if woke-due > lagAbove {
				late = append(late, history.Span{From: due, To: woke})
			}
			tick := max(woke-due, 0)
			if w, ok := cpuWaited(); ok && known {
				tick = max(tick, w-waited)
				waited = w
			}
			m.late.Add(int64(tick))
		}
	}()
	m.stop = sync.OnceValue(func() []history.Span {
		cancel()
		wg.Wait()
		return late
	})
	return m
}

// Stop ends the measure and returns the stretches in which the harness's
// timer woke late, in the run's time, each time it is called.
func (m *lagMeter) Stop() []history.Span { return m.stop() }

// maxStretch bounds a wait in the machine's time (wait): at most this many
// times its bound on the clock. The race-detector stage of make test keeps
// the machine about 55% late for minutes, in bursts that ran a three-times
// wait out before a stuck lock's bound of machine time had passed.
const maxStretch = 5

// wait waits for done until bound of the machine's time has passed: time on
// the clock less what the machine ran late meanwhile, but never longer than
// maxStretch times bound. It returns whether done came, how long it waited
// and how much of that the machine ran late. A loaded machine thus gives a
// lock the time it would have had on an idle one, and a stuck lock is found
// stuck all the same, a little later.
func (m *lagMeter) wait(ctx context.Context, done <-chan struct{}, bound time.Duration) (ok bool, waited, late time.Duration) {
	start, late0 := m.now(), m.late.Load()
	t := time.NewTimer(bound)
	defer t.Stop()
	for {
		select {
		case <-done:
			ok = true
		case <-ctx.Done():
		case <-t.C:
		}
		waited, late = m.now()-start, time.Duration(m.late.Load()-late0)
		left := min(bound-(waited-late), maxStretch*bound-waited)
		if ok || ctx.Err() != nil || left <= 0 {
			return ok, waited, late
		}
		t.Reset(left)
	}
}

// cpuWaited is the time, since the machine started, in which some task
// waited for a core (the "some total" of /proc/pressure/cpu); false where
// the kernel does not tell (not Linux, or pressure stall information off).
func cpuWaited() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return 0, false
	}
	return someTotal(b)
}

// someTotal reads the "some" line's total of a /proc/pressure file.
func someTotal(b []byte) (time.Duration, bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	_, total, found := bytes.Cut(line, []byte("total="))
	if !bytes.HasPrefix(line, []byte("some ")) || !found {
		return 0, false
	}
	us, err := strconv.ParseInt(string(bytes.TrimSpace(total)), 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(us) * time.Microsecond, true
}
