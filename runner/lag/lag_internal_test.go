package lag

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestMeterLag runs the meter on a clock that jumps a second while the
// meter sleeps its fifth tick: that tick is recorded a second late. (A
// loaded machine may add short stretches of its own.)
func TestMeterLag(t *testing.T) {
	start := time.Now()
	var mu sync.Mutex
	calls := 0
	var skew time.Duration
	now := func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 10 { // the fifth tick's wake-up
			skew = time.Second
		}
		return time.Since(start) + skew
	}
	m := Start(context.Background(), now, func() []int { return nil })
	for {
		mu.Lock()
		n := calls
		mu.Unlock()
		if n > 20 {
			break
		}
		time.Sleep(lagTick)
	}
	late := m.Stop()
	var long []time.Duration
	for _, l := range late {
		if d := l.To - l.From; d >= time.Second {
			long = append(long, d)
		}
	}
	if len(long) != 1 || long[0] > time.Second+time.Second/2 {
		t.Fatalf("late stretches %v, want the fifth tick's a second late", late)
	}
	if again := m.Stop(); len(again) != len(late) {
		t.Errorf("a second stop returned %v", again)
	}
}

// TestWaitMachineTime waits 100 ms of the machine's time while the test
// says the machine ran late, by the meter's count or by a thread's wait for
// a core, whichever is more: the wait lasts that much longer on the clock,
// up to maxStretch times its bound, and ends at once when what it waits for
// has come.
func TestWaitMachineTime(t *testing.T) {
	const bound = 100 * time.Millisecond
	start := time.Now()
	now := func() time.Duration { return time.Since(start) }
	tests := []struct {
		name    string
		late    time.Duration // how late the test says the machine ran
		queued  time.Duration // how long the test says a server's thread waited for a core
		done    bool          // what the wait waits for comes at once
		starved bool          // the wait ends with less than bound of the machine's time
	}{
		{name: "idle machine"},
		{name: "80 ms late", late: 80 * time.Millisecond},
		{name: "a thread queued 80 ms, the meter saw less", late: 10 * time.Millisecond, queued: 80 * time.Millisecond},
		{name: "a thread queued a second", queued: time.Second, starved: true},
		{name: "a second late: cut at ten times the bound", late: time.Second, starved: true},
		{name: "done", late: time.Second, done: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No meter runs: the lateness is only what the test adds,
			// when the wait first looks at the clock again.
			m := &Meter{}
			samples := 0
			m.queue = func() map[int]time.Duration {
				if samples++; samples == 1 {
					return map[int]time.Duration{7: time.Hour}
				}
				return map[int]time.Duration{7: time.Hour + tt.queued}
			}
			calls := 0
			m.now = func() time.Duration {
				if calls++; calls == 2 {
					m.late.Add(int64(tt.late))
				}
				return now()
			}
			done := make(chan struct{})
			if tt.done {
				close(done)
			}
			ok, waited, late := m.Wait(context.Background(), done, bound)
			switch {
			case ok != tt.done:
				t.Fatalf("wait reported done %v, want %v", ok, tt.done)
			case tt.done:
				if waited >= bound {
					t.Errorf("waited %s for what had come", waited)
				}
			case late < max(tt.late, tt.queued):
				t.Errorf("counted %s late, want at least the %s the test added", late, max(tt.late, tt.queued))
			case waited > maxStretch*bound+bound/2:
				t.Errorf("waited %s, past %d times the %s bound", waited, maxStretch, bound)
			case tt.starved != (waited-late < bound):
				t.Errorf("waited %s of which %s late: starved %v, want %v", waited, late, !tt.starved, tt.starved)
			case !tt.starved && waited < bound+max(tt.late, tt.queued):
				t.Errorf("waited %s, want at least %s: the bound and the late time", waited, bound+max(tt.late, tt.queued))
			}
		})
	}
}

func TestRunningField(t *testing.T) {
	tests := []struct {
		line string
		want int
		ok   bool
	}{
		{"0.32 0.10 0.04 3/123 456\n", 3, true},
		{"6.27 6.22 5.07 11/402 31490", 11, true},
		{"0.32 0.10 0.04", 0, false},
		{"0.32 0.10 0.04 x/123 456", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		if got, ok := runningField([]byte(tt.line)); got != tt.want || ok != tt.ok {
			t.Errorf("runningField(%q) = %d, %v; want %d, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}
