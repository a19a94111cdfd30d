package suite

import (
	"runtime"
	"sync"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/service"
)

// slots hands out the jobs of a parallel run in their order, each once the
// machine has room for it. A run costs the machine by its service: as
// much as the runs a core makes of it by default allow (service.Parallel:
// a ZooKeeper run, whose three JVMs cost as much as nearly three Redis
// runs, costs 8/3 on two cores, a Redis run 1), and the runs at once cost
// at most -parallel, so that a comparison or a catalogue never starts more
// JVMs than the machine can run beside its other runs. A job that does not
// fit waits, and a later, cheaper one goes first.
type slots struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending []int // indexes into todo, in the order they go
	todo    []job
	room    float64 // what the runs at once may cost: -parallel
	used    float64 // what the runs under way cost
	closed  bool
}

func newSlots(todo []job, order []int, parallel int) *slots {
	s := &slots{pending: order, todo: todo, room: float64(parallel)}
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
			if c := cost(s.todo[i]); s.used == 0 || s.used+c <= s.room+1e-9 {
				s.pending = append(s.pending[:k], s.pending[k+1:]...)
				s.used += c
				return i, true
			}
		}
		s.cond.Wait()
	}
}

// done frees job i's slot.
func (s *slots) done(i int) {
	s.mu.Lock()
	s.used -= cost(s.todo[i])
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

// cost is what a run of job j costs the machine, in runs of a service
// whose runs are cheapest: 4 a core over how many of its runs a machine
// makes at once (service.Parallel).
func cost(j job) float64 {
	cpus := runtime.NumCPU()
	return float64(4*cpus) / float64(service.Parallel(topologyOf(j), cpus))
}
