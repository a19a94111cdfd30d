package lag

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"time"
)

// queueWaits is how long each thread of roots and of every process below
// them has waited on a run queue for a core, by thread id: the second field
// of the kernel's /proc/<pid>/task/<tid>/schedstat. With a run's servers
// (local processes or containers) and lock programs as roots, that is what
// the run's history depends on besides the harness, and nothing of another
// run's. A thread stopped by SIGSTOP or a frozen cgroup is on no queue, so a
// paused node adds nothing. It is empty where the kernel does not keep
// these counts.
//
// The crowd share of the lag meter guesses what each task lost from how
// many were runnable; these counts are what each thread did lose. At 80%
// lateness the share once fell short (a correct ZooKeeper lock called stuck
// when the wait was stretched to ten times its bound, docs/performance.md),
// so a wait counts the more of the two.
func queueWaits(listed bool, roots ...int) map[int]time.Duration {
	waits := make(map[int]time.Duration)
	walkThreads(roots, listed, func(tid int, dir string) { readQueueWait(waits, tid, dir) })
	return waits
}

// ownQueueWaits adds to waits how long each thread of this process alone,
// the harness, has waited for a core.
func ownQueueWaits(waits map[int]time.Duration) {
	eachThread(os.Getpid(), func(tid int, dir string) { readQueueWait(waits, tid, dir) })
}

// readQueueWait sets waits[tid] from the schedstat file in dir, a thread's
// folder, if it can be read.
func readQueueWait(waits map[int]time.Duration, tid int, dir string) {
	if b, err := os.ReadFile(dir + "schedstat"); err == nil {
		if d, ok := runDelay(b); ok {
			waits[tid] = d
		}
	}
}

// mostQueued is the longest any one thread waited for a core between two
// samples of queueWaits. A thread first seen in the second was born in
// between, so all of its wait counts; one that ended in between is not
// counted, which can only make the figure smaller.
func mostQueued(before, after map[int]time.Duration) time.Duration {
	var most time.Duration
	for tid, d := range after {
		if b, ok := before[tid]; ok && b <= d {
			d -= b
		}
		most = max(most, d)
	}
	return most
}

// childrenListed tells whether the kernel lists each thread's children
// (/proc/<pid>/task/<tid>/children), which lets walkThreads read only the
// run's own processes.
func childrenListed() bool {
	_, err := os.Stat("/proc/thread-self/children")
	return err == nil
}

// walkThreads calls visit with the id and folder ("/proc/<pid>/task/<tid>/")
// of each thread of roots and of every process below them, and returns
// those processes, roots first. With listed (childrenListed), it follows
// each thread's children file down; without, it finds children from the
// parent field of every /proc/<pid>/stat, which grows with the machine's
// process count. A process born or ended meanwhile may be missed.
func walkThreads(roots []int, listed bool, visit func(tid int, dir string)) []int {
	var scanned map[int][]int
	if !listed {
		scanned = childrenByParent()
	}
	found := slices.Clone(roots)
	for i := 0; i < len(found); i++ {
		pid := found[i]
		found = append(found, scanned[pid]...)
		eachThread(pid, func(tid int, thread string) {
			if visit != nil {
				visit(tid, thread)
			}
			if listed {
				found = append(found, listedChildren(thread)...)
			}
		})
	}
	return found
}

// eachThread calls visit with the id and folder ("/proc/<pid>/task/<tid>/")
// of each thread of process pid; none if it ended meanwhile.
func eachThread(pid int, visit func(tid int, dir string)) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, _ := os.ReadDir(dir)
	for _, task := range tasks {
		if tid, err := strconv.Atoi(task.Name()); err == nil {
			visit(tid, dir+task.Name()+"/")
		}
	}
}

// listedChildren reads the children file of the thread whose folder is dir.
func listedChildren(dir string) []int {
	b, err := os.ReadFile(dir + "children")
	if err != nil {
		return nil
	}
	var children []int
	for _, f := range bytes.Fields(b) {
		if child, err := strconv.Atoi(string(f)); err == nil {
			children = append(children, child)
		}
	}
	return children
}

// childrenByParent scans every /proc/<pid>/stat for its parent field: the
// children of each process, by the parent's pid.
func childrenByParent() map[int][]int {
	children := make(map[int][]int)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return children
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if parent, ok := parentField(b); ok {
			children[parent] = append(children[parent], child)
		}
	}
	return children
}

// parentField reads the parent's pid from a /proc/<pid>/stat line,
// "1234 (redis-server) S 1200 …": the second field after the command's
// closing parenthesis, which is found from the end since a command's name
// may hold parentheses and spaces.
func parentField(b []byte) (int, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	n, err := strconv.Atoi(string(f[1]))
	return n, err == nil
}

// runDelay reads a schedstat line, "<on-cpu ns> <run-queue ns> <slices>",
// for its time on a run queue.
func runDelay(b []byte) (time.Duration, bool) {
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n), true
}
