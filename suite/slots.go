package suite

import (
	"runtime"
	"sync"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/service"
)

// slots hands out the jobs of a parallel run in their order, each once a
// run of its service may start: no service has more runs at once than it
// allows (service.Parallel: three of ZooKeeper's on two cores, whose runs
// start three JVMs each), whatever -parallel says, so that a comparison or
// a catalogue never starts more JVMs than the machine can run. A job whose
// service is full waits, and a later job of another service goes first.
type slots struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending []int // indexes into todo, in the order they go
	todo    []job
	running map[cluster.Service]int
	closed  bool
}

func newSlots(todo []job, order []int) *slots {
	s := &slots{pending: order, todo: todo, running: map[cluster.Service]int{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// take waits for the next job a free slot of its service allows and
// returns its index; false once none is left or close was called.
func (s *slots) take() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed || len(s.pending) == 0 {
			return 0, false
		}
		for k, i := range s.pending {
			t := topologyOf(s.todo[i])
			if s.running[t.Service()] < service.Parallel(t, runtime.NumCPU()) {
				s.pending = append(s.pending[:k], s.pending[k+1:]...)
				s.running[t.Service()]++
				return i, true
			}
		}
		s.cond.Wait()
	}
}

// done frees job i's slot.
func (s *slots) done(i int) {
	s.mu.Lock()
	s.running[topologyOf(s.todo[i]).Service()]--
	s.mu.Unlock()
	s.cond.Broadcast()
}

// close makes every take return false.
func (s *slots) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cond.Broadcast()
}

// topologyOf is the topology job j runs on: its scenario's, single when it
// names none.
func topologyOf(j job) cluster.Topology {
	if j.scenario.Topology == "" {
		return cluster.Single
	}
	return j.scenario.Topology
}
