package libraries

import (
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// Lock is one adapted library lock: its name, the topologies it makes sense
// on, its constructor and a one-sentence description.
type Lock struct {
	Name       string
	Topologies []cluster.Topology
	New        harness.NewLocker
	About      string
}

// All lists every adapted library lock: redsync, redsync-refresh, redislock
// and redislock-refresh, in that order.
func All() []Lock {
	return []Lock{
		{
			Name: "redsync", Topologies: []cluster.Topology{cluster.Single, cluster.Redlock}, New: NewRedsync,
			About: "github.com/go-redsync/redsync/v4 (Redlock over one pool per node), one try, no renewal.",
		},
		{
			Name: "redsync-refresh", Topologies: []cluster.Topology{cluster.Single, cluster.Redlock}, New: NewRedsyncRefresh,
			About: "github.com/go-redsync/redsync/v4 with a loop that calls ExtendContext every TTL/3 while the lock is held.",
		},
		{
			Name: "redislock", Topologies: []cluster.Topology{cluster.Single, cluster.Replicated}, New: NewRedislock,
			About: "github.com/bsm/redislock on the master, no retry, no renewal.",
		},
		{
			Name: "redislock-refresh", Topologies: []cluster.Topology{cluster.Single, cluster.Replicated}, New: NewRedislockRefresh,
			About: "github.com/bsm/redislock with a loop that calls Refresh every TTL/3 while the lock is held.",
		},
	}
}
