package scenarios

import (
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/service/memcached"
)

// mcTTL is the lease of the memcached scenarios: memcached counts expiry
// in whole seconds of a clock that ticks once a second, so a lease of two
// seconds is the shortest a correct lock can be sure of (it asks the
// server for three: memcached.Lease).
const mcTTL = memcached.MinLease

// memcached lists the scenarios of the memcached topology: one server, the
// lock an item added with an expiry; the inventory is the Redis node,
// which no fault touches.
func memcachedScenarios() []runner.Scenario {
	work := runner.Workload{TTL: mcTTL, Work: 100 * time.Millisecond, Duration: 3 * time.Second}
	return []runner.Scenario{
		{
			Name: "contention-memcached",
			Description: "On one memcached server, the lock an item added with an expiry: four clients compete for one lock " +
				"with short critical sections and no fault.",
			Topology: cluster.MemcachedTopology,
			Workload: runner.Workload{TTL: mcTTL, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond},
		},
		{
			Name: "whole-second-memcached",
			Description: "On one memcached server, no fault: every critical section takes 1 s. The server's clock ticks once " +
				"a second, and an item added with an expiry of n seconds expires at the n-th tick after, so an expiry of one " +
				"second lasts anything from a moment to a second: shorter than every critical section here.",
			Topology: cluster.MemcachedTopology,
			Workload: runner.Workload{TTL: mcTTL, Work: time.Second, Duration: 4 * time.Second},
		},
		{
			Name: "pause-before-delete-memcached",
			Description: "On one memcached server: client 0 is paused (stop-the-world) in its second and third releases just " +
				"before the release's second request, the one that removes the item, until its item expired (a lease of 2 s, " +
				"asked as 3 s, no renewal once the release began) and another client holds the lock (at most 4 s): a delete that arrives late.",
			Topology: cluster.MemcachedTopology,
			Workload: runner.Workload{TTL: mcTTL, Work: 300 * time.Millisecond, Duration: 7 * time.Second},
			Failpoints: []failpoint.Point{
				{Name: failpoint.BeforeCommand(failpoint.PhaseRelease, 2), Client: 0, Skip: 1, Times: 2,
					Action: failpoint.PauseUntil(failpoint.Acquired, 2*mcTTL), Crux: true},
			},
		},
		{
			Name: "evict-holder-memcached",
			Description: "On one memcached server with 2 MB for items: inside client 0's second critical section, a writer " +
				"fills the server with items of the lock's size until its LRU evicts the lock's item; the holder works on for " +
				"500 ms, then writes the stock and releases.",
			Topology: cluster.MemcachedTopology, Workload: work,
			Failpoints: []failpoint.Point{
				{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Inject(fault.Evict{}, 0), Crux: true},
				{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Sleep(500 * time.Millisecond)},
			},
		},
		{
			Name: "restart-memcached",
			Description: "On one memcached server: inside client 0's second critical section, the server is killed (SIGKILL) " +
				"and restarted at once; memcached keeps nothing on disk, so it comes back empty. The holder works on for 500 ms, " +
				"then writes the stock and releases.",
			Topology: cluster.MemcachedTopology, Workload: work,
			Failpoints: []failpoint.Point{
				{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Inject(fault.KillNode{}, 0), Crux: true},
				{Name: failpoint.CriticalSection, Client: 0, Skip: 1, Action: failpoint.Sleep(500 * time.Millisecond)},
			},
		},
		{
			Name: "pause-holder-memcached",
			Description: "On one memcached server: client 0 is paused (stop-the-world, its renewal included) for 5 s inside its " +
				"second critical section, after reading the stock: two and a half leases of 2 s.",
			Topology: cluster.MemcachedTopology,
			Workload: runner.Workload{TTL: mcTTL, Work: 10 * time.Millisecond, Duration: 6 * time.Second},
			Failpoints: []failpoint.Point{{Name: failpoint.CriticalSection, Client: 0, Skip: 1,
				Action: failpoint.Pause(5 * mcTTL / 2), Crux: true}},
		},
		{
			Name: "holder-cut-off-memcached",
			Description: "On one memcached server: right after its second acquire, client 0 is cut off from the server " +
				"(connections reset and refused) for 6 s, three leases: its renewals and its release cannot reach the server, " +
				"its item expires and another client takes the lock; then the cut heals.",
			Topology: cluster.MemcachedTopology,
			Workload: runner.Workload{TTL: mcTTL, Work: 100 * time.Millisecond, Duration: 7 * time.Second},
			Failpoints: []failpoint.Point{{Name: failpoint.Acquired, Client: 0, Skip: 1,
				Action: failpoint.Inject(fault.Partition{Client: 0}, 3*mcTTL)}},
		},
		{
			Name: "lost-acquire-reply-memcached",
			Description: "On one memcached server: four times, the reply to client 0's add is dropped: the add runs on the " +
				"server (and, under contention, is mostly refused), the client waits its timeout and sees a timeout. A lock that " +
				"takes a timeout for success enters while another client holds the lock.",
			Topology: cluster.MemcachedTopology, Workload: work,
			Failpoints: []failpoint.Point{{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 0, Skip: 2, Times: 4,
				Action: failpoint.DropReply()}},
		},
	}
}
