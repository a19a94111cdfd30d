package runner

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
	stop := meterLag(context.Background(), now)
	for {
		mu.Lock()
		n := calls
		mu.Unlock()
		if n > 20 {
			break
		}
		time.Sleep(lagTick)
	}
	late := stop()
	var long []time.Duration
	for _, l := range late {
		if d := l.To - l.From; d >= time.Second {
			long = append(long, d)
		}
	}
	if len(long) != 1 || long[0] > time.Second+time.Second/2 {
		t.Fatalf("late stretches %v, want the fifth tick's a second late", late)
	}
	if again := stop(); len(again) != len(late) {
		t.Errorf("a second stop returned %v", again)
	}
}
