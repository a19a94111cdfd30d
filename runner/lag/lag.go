// Package lag measures how late a loaded machine runs one run: how late
// the harness's timers wake and how long the run's own processes (its
// servers, its lock programs) and the harness's threads wait for a core.
// A run's checkers excuse what the machine, not the lock, made late: a
// liveness wait stretches by it (Meter.Wait), and the handover check
// subtracts its stretches (history.End.Late, Queued).
package lag

import (
	"bytes"
	"context"
	"os"
	"runtime"
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

// Meter measures how late the machine runs one run.
type Meter struct {
	now  func() time.Duration
	stop func() []history.Span
	// late is how much of the run so far the machine ran late, in
	// nanoseconds: per tick, the more of the meter's own lateness and the
	// part of the tick a task could not have had a core, when more tasks
	// were runnable than the machine has cores (each then gets cores/runnable
	// of one). That share covers the servers and lock programs too. Only
	// waits use the total, so the share is read only while one is on.
	late    atomic.Int64
	waiting atomic.Int32
	// queue samples how long each thread of the harness and of the run's
	// processes has waited for a core (queueWaits, ownQueueWaits).
	queue func() map[int]time.Duration
	// queued are, for each queueEvery of the workload, a stretch as long
	// as the longest any one thread of the servers and lock programs
	// waited for a core in it, ending when it ends; written by the meter
	// until it stops.
	queued []history.Span
}

// queueEvery is how often the meter reads how long the servers' threads
// waited for a core, for the handover checker: often enough to place a
// starved server within a handover of a hundred milliseconds or two, seldom
// enough that the reading (a kept file a thread, read in place: threads)
// costs little.
const queueEvery = 50 * time.Millisecond

// Start measures, until Stop is first called, how late the machine runs
// the harness's timers and how crowded its cores are; its waits also read
// how long the threads of this process, and of the run's own processes
// (pids and every process below them), waited for a core (queueWaits).
// Another run's processes are never read, so that each run's reading costs
// what its own processes number, however many runs share the machine.
func Start(ctx context.Context, now func() time.Duration, pids func() []int) *Meter {
	m := &Meter{now: now}
	run := newThreads(childrenListed(), pids)
	// The harness's own threads are left out of queued: its timer speaks
	// for them (late), and they serve every run of this process.
	serverQueue := run.waits
	m.queue = func() map[int]time.Duration {
		waits := serverQueue()
		ownQueueWaits(waits)
		return waits
	}
	ctx, cancel := context.WithCancel(ctx)
	cores := runtime.NumCPU()
	var late []history.Span
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer run.close()
		t := time.NewTimer(lagTick)
		defer t.Stop()
		// sampled is when waits were read, in the run's time; the first
		// tick sets it, so that the meter asks the clock only at ticks.
		sampled, waits := time.Duration(-1), serverQueue()
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
			if n, ok := m.crowd(); ok && n > cores {
				slept := woke - due + lagTick
				tick = max(tick, slept*time.Duration(n-cores)/time.Duration(n))
			}
			m.late.Add(int64(tick))
			switch {
			case sampled < 0:
				sampled = woke
			case woke-sampled >= queueEvery:
				next := serverQueue()
				if longest := min(mostQueued(waits, next), woke-sampled); longest > lagAbove {
					m.queued = append(m.queued, history.Span{From: woke - longest, To: woke})
				}
				sampled, waits = woke, next
			}
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
func (m *Meter) Stop() []history.Span { return m.stop() }

// Queued ends the measure and returns, in the run's time, a stretch for
// each queueEvery in which a thread of the servers or lock programs waited
// for a core, as long as the longest such wait.
func (m *Meter) Queued() []history.Span {
	m.stop()
	return m.queued
}

// maxStretch bounds a wait in the machine's time (Wait): at most this many
// times its bound on the clock. The race-detector stage of make test keeps
// the machine more than half late for minutes (58% by the share of the
// cores), in bursts that could run a three-times wait out before a stuck
// lock's bound of machine time had passed. Under two `yes` beside the
// pitfalls and scenarios packages the share counted 80–90% of each wait late
// (the most any one thread of the run waited was 8–12%), so that five times
// left every stuck pitfall unknown, even alone; ten times reaches 90%.
const maxStretch = 10

// Wait waits for done until bound of the machine's time has passed: time on
// the clock less what the machine ran late meanwhile, but never longer than
// maxStretch times bound. What the machine ran late is the more of the
// meter's count and the longest any one thread of the run's processes
// waited for a core meanwhile (queueWaits), which is read each time the
// wait would end. It returns whether done came, how long it waited
// and how much of that the machine ran late. A loaded machine thus gives a
// lock the time it would have had on an idle one, and a stuck lock is found
// stuck all the same, a little later.
func (m *Meter) Wait(ctx context.Context, done <-chan struct{}, bound time.Duration) (ok bool, waited, late time.Duration) {
	m.waiting.Add(1)
	defer m.waiting.Add(-1)
	start, late0 := m.now(), m.late.Load()
	queued := m.queue()
	t := time.NewTimer(bound)
	defer t.Stop()
	for {
		select {
		case <-done:
			ok = true
		case <-ctx.Done():
		case <-t.C:
		}
		// The sample first, so that its threads' waits fall within waited.
		longest := mostQueued(queued, m.queue())
		waited, late = m.now()-start, max(time.Duration(m.late.Load()-late0), longest)
		left := min(bound-(waited-late), maxStretch*bound-waited)
		if ok || ctx.Err() != nil || left <= 0 {
			return ok, waited, late
		}
		t.Reset(left)
	}
}

// crowd is runnable while a wait is on, and false otherwise: outside a
// wait only the timer's lateness counts.
func (m *Meter) crowd() (int, bool) {
	if m.waiting.Load() == 0 {
		return 0, false
	}
	return runnable()
}

// runnable is how many tasks of the machine are runnable now, the meter's
// own included (the fourth field of /proc/loadavg); false where the kernel
// does not tell.
func runnable() (int, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	return runningField(b)
}

// runningField reads the runnable count of a /proc/loadavg line:
// "0.32 0.10 0.04 3/123 456" is 3.
func runningField(b []byte) (int, bool) {
	f := bytes.Fields(b)
	if len(f) < 4 {
		return 0, false
	}
	running, _, found := bytes.Cut(f[3], []byte("/"))
	n, err := strconv.Atoi(string(running))
	if !found || err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
