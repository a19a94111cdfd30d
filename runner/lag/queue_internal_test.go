package lag

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestQueueWaits starts three busy processes pinned to one core, so each
// can run a third of the time at most: the threads this process started
// must be seen waiting for a core at least as long as one of them ran.
func TestQueueWaits(t *testing.T) {
	before := queueWaits(childrenListed(), os.Getpid())
	if len(before) == 0 {
		t.Skip("this kernel keeps no /proc/<pid>/task/<tid>/schedstat")
	}
	spinners := spinOnOneCore(t, 3)
	// Until one of them has run 100 ms: the other two waited meanwhile.
	const ran = 100 * time.Millisecond
	deadline := time.Now().Add(20 * time.Second)
	for onCPU(t, spinners[0].Process.Pid) < ran {
		if time.Now().After(deadline) {
			t.Fatalf("a busy process ran less than %s in 20 s", ran)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := mostQueued(before, queueWaits(childrenListed(), os.Getpid())); got < ran {
		t.Errorf("the longest wait for a core was %s, want at least %s: three busy processes shared one core", got, ran)
	}
}

// TestMeterQueued runs the lag meter while three busy processes below this
// one share a core: its queued stretches must cover a good part of the
// time when they are the run's processes, and none of it when they are
// not (another run's, whose waits are not this run's).
func TestMeterQueued(t *testing.T) {
	if len(queueWaits(childrenListed(), os.Getpid())) == 0 {
		t.Skip("this kernel keeps no /proc/<pid>/task/<tid>/schedstat")
	}
	spinners := spinOnOneCore(t, 3)
	var pids []int
	for _, s := range spinners {
		pids = append(pids, s.Process.Pid)
	}
	const span = 500 * time.Millisecond
	// covered runs a meter until it has read pids for span of its own
	// time (a loaded machine may wake it late), and adds up its stretches.
	covered := func(pids []int) time.Duration {
		start := time.Now()
		var mu sync.Mutex
		var calls int
		var first, last time.Duration // the meter's first wake-up, and its latest reading
		now := func() time.Duration {
			d := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			if calls++; calls == 2 {
				first = d
			}
			last = d
			return d
		}
		m := Start(context.Background(), now, func() []int { return pids })
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			read := calls >= 2 && last-first >= span+queueEvery
			mu.Unlock()
			if read {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the meter did not run %s in 30 s", span)
			}
			time.Sleep(lagTick)
		}
		var covered time.Duration
		for _, q := range m.Queued() {
			covered += q.To - q.From
		}
		return covered
	}
	// Each spinner waits about two thirds of the time; the longest of them
	// more. A third of the span leaves room for the machine's own pace.
	if got := covered(pids); got < span/3 {
		t.Errorf("queued stretches cover %s of %s, while the run's %d busy processes shared a core", got, span, len(spinners))
	}
	if got := covered(nil); got != 0 {
		t.Errorf("queued stretches cover %s of %s of a run without processes: another run's were read", got, span)
	}
}

// spinOnOneCore starts n busy processes pinned to one core this process
// may use; they end with the test.
func spinOnOneCore(t *testing.T, n int) []*exec.Cmd {
	t.Helper()
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		t.Fatalf("which cores this process may use: %v", err)
	}
	core := -1
	for c := range 1024 {
		if cpus.IsSet(c) {
			core = c
			break
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var spinners []*exec.Cmd
	t.Cleanup(func() {
		cancel()
		for _, c := range spinners {
			_ = c.Wait()
		}
	})
	for range n {
		c := exec.CommandContext(ctx, "taskset", "-c", strconv.Itoa(core), "sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatalf("start a busy process: %v", err)
		}
		spinners = append(spinners, c)
	}
	return spinners
}

// TestDescendants starts a shell that starts a sleep: both ways of finding
// the processes below the shell must find the two.
func TestDescendants(t *testing.T) {
	sh := exec.Command("sh", "-c", "sleep 60 & wait")
	// A group of their own, so that the cleanup ends the sleep too.
	sh.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		t.Fatalf("start a shell: %v", err)
	}
	t.Cleanup(func() {
		_ = unix.Kill(-sh.Process.Pid, unix.SIGKILL)
		_ = sh.Wait()
	})
	ways := []struct {
		name   string
		listed bool
	}{
		{"children files", true},
		{"every stat", false},
	}
	if !childrenListed() {
		ways = ways[1:]
	}
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			deadline := time.Now().Add(10 * time.Second)
			for {
				found := walkThreads([]int{sh.Process.Pid}, way.listed, nil)
				if len(found) == 2 && found[0] == sh.Process.Pid && found[1] != sh.Process.Pid {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("found %v below the shell %d, want it and its sleep", found, sh.Process.Pid)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// onCPU is how long process pid has run on a core: the first field of its
// schedstat.
func onCPU(t *testing.T, pid int) time.Duration {
	var ns int64
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err == nil {
		_, err = fmt.Sscan(string(b), &ns)
	}
	if err != nil {
		t.Fatalf("read the schedstat of %d: %v", pid, err)
	}
	return time.Duration(ns)
}

func TestQueueFields(t *testing.T) {
	parents := []struct {
		line string
		want int
		ok   bool
	}{
		{"1234 (redis-server) S 1200 1234 1234 0 -1", 1200, true},
		{"99 (a (b) c) R 7 99 99", 7, true},
		{"99 (cut", 0, false},
		{"99 (x) S", 0, false},
	}
	for _, tt := range parents {
		if got, ok := parentField([]byte(tt.line)); got != tt.want || ok != tt.ok {
			t.Errorf("parentField(%q) = %d, %v; want %d, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
	delays := []struct {
		line string
		want time.Duration
		ok   bool
	}{
		{"579866531 1221581065 167\n", 1221581065, true},
		{"579866531", 0, false},
		{"1 x 2", 0, false},
	}
	for _, tt := range delays {
		if got, ok := runDelay([]byte(tt.line)); got != tt.want || ok != tt.ok {
			t.Errorf("runDelay(%q) = %s, %v; want %s, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
	before := map[int]time.Duration{1: 5, 2: 10, 3: 100}
	after := map[int]time.Duration{1: 25, 2: 12, 4: 15} // 3 ended, 4 was born
	if got := mostQueued(before, after); got != 20 {
		t.Errorf("mostQueued = %d, want 20 (thread 1's growth)", got)
	}
}

// BenchmarkQueueWaits is the cost of one sample, taken every queueEvery of
// a run and a few times a wait, with eight runs of six server processes
// each below this process: a run reads its own six, where it once read all
// forty-eight (every process below the harness), each run of the eight.
func BenchmarkQueueWaits(b *testing.B) {
	var runs [8][]int
	for i := range runs {
		for range 6 {
			c := exec.CommandContext(b.Context(), "sleep", "600")
			if err := c.Start(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Process.Kill(); c.Wait() })
			runs[i] = append(runs[i], c.Process.Pid)
		}
	}
	b.Run("one run's processes", func(b *testing.B) {
		for b.Loop() {
			queueWaits(childrenListed(), runs[0]...)
		}
	})
	b.Run("every process below the harness", func(b *testing.B) {
		for b.Loop() {
			queueWaits(childrenListed(), os.Getpid())
		}
	})
}

// BenchmarkDescendants is the cost of finding the processes below this one
// each way (walkThreads): the scan grows with the machine's processes.
func BenchmarkDescendants(b *testing.B) {
	b.Run("children files", func(b *testing.B) {
		for b.Loop() {
			walkThreads([]int{os.Getpid()}, true, nil)
		}
	})
	b.Run("every stat", func(b *testing.B) {
		for b.Loop() {
			walkThreads([]int{os.Getpid()}, false, nil)
		}
	})
}
