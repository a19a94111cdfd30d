package lag

import (
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// TestThreads follows a run's processes as they come and go: a process
// started later is read once the threads are found again, an ended one's
// file is closed at the next reading, and after close nothing stays open
// while readings go on.
func TestThreads(t *testing.T) {
	if len(queueWaits(childrenListed(), os.Getpid())) == 0 {
		t.Skip("this kernel keeps no /proc/<pid>/task/<tid>/schedstat")
	}
	var mu sync.Mutex
	var roots []int
	run := newThreads(childrenListed(), func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), roots...)
	})
	defer run.close()
	if got := run.waits(); len(got) != 0 {
		t.Fatalf("a run without processes read %d threads", len(got))
	}
	first, second := sleeper(t), sleeper(t)
	mu.Lock()
	roots = []int{first.Process.Pid, second.Process.Pid}
	mu.Unlock()
	// Found anew within findEvery: until then the readings may miss them.
	deadline := time.Now().Add(10 * findEvery)
	for {
		got := run.waits()
		_, a := got[first.Process.Pid]
		_, b := got[second.Process.Pid]
		if a && b {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("two processes of the run not read in %s: %v", 10*findEvery, got)
		}
		time.Sleep(findEvery / 10)
	}
	first.Process.Kill()
	first.Wait()
	got := run.waits()
	if _, ok := got[first.Process.Pid]; ok {
		t.Errorf("an ended process's thread still read: %v", got)
	}
	if _, ok := got[second.Process.Pid]; !ok {
		t.Errorf("a live process's thread not read: %v", got)
	}
	run.mu.Lock()
	_, kept := run.files[first.Process.Pid]
	run.mu.Unlock()
	if kept {
		t.Error("an ended thread's file is kept open")
	}
	run.close()
	if n := len(run.files); n != 0 {
		t.Errorf("%d files open after close", n)
	}
	if _, ok := run.waits()[second.Process.Pid]; !ok {
		t.Error("a reading after close misses a live process")
	}
	if n := len(run.files); n != 0 {
		t.Errorf("a reading after close kept %d files open", n)
	}
}

// sleeper starts a process that sleeps until the test ends.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "600")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

// BenchmarkThreads is BenchmarkQueueWaits's first case as the meter reads
// it now: six processes' threads, found at most every findEvery, their
// files kept open.
func BenchmarkThreads(b *testing.B) {
	var pids []int
	for range 6 {
		c := exec.CommandContext(b.Context(), "sleep", "600")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Process.Kill(); c.Wait() })
		pids = append(pids, c.Process.Pid)
	}
	run := newThreads(childrenListed(), func() []int { return pids })
	defer run.close()
	for b.Loop() {
		run.waits()
	}
}
