package scenarios

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/runner"
)

// poolSize is the shared pool of the Redis and memcached pool scenarios,
// as pool-sql's: one fewer than the four requests that may wait for the
// lock at once.
const poolSize = 3

// sharedPools are the small-pool scenarios on Redis's topologies and on
// memcached (the comparison's Pool column): contention's four clients as
// the request threads of one service that share its client library's pool
// (service.Pooler), as pool-sql's share a DataSource. A Redis lock that
// waits by retrying holds a pooled connection only while each try is on the
// wire, so a correct one should stay ok: the cell says so, unless the lock
// blocks on the server (WAIT) while it holds a connection.
func sharedPools() []runner.Scenario {
	shares := fmt.Sprintf("the four clients are the request threads of one service and share its go-redis pool of %d connections "+
		"(one fewer than the requests that may wait for the lock at once) to each master, for the lock's commands and its renewals alike; "+
		"a command that finds every connection taken waits for one, up to 1 s. Short critical sections, no fault.", poolSize)
	redis := func(name, where string, t cluster.Topology, w runner.Workload) runner.Scenario {
		w.Pool = poolSize
		return runner.Scenario{Name: name, Description: where + shares, Topology: t, Workload: w}
	}
	return []runner.Scenario{
		redis("pool", "On one Redis master: ", cluster.Single,
			runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond}),
		redis("pool-replicated", "On a master with two replicas and three Sentinels, clients reaching the master through Sentinel: ",
			cluster.Replicated, runner.Workload{TTL: ttl, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond}),
		redis("pool-redlock", "Redlock over five masters: ", cluster.Redlock,
			runner.Workload{TTL: redlockTTL, Work: 10 * time.Millisecond, Duration: 2 * time.Second}),
		{
			Name: "pool-memcached",
			Description: fmt.Sprintf("On one memcached server, the lock an item added with an expiry: the four clients are the request "+
				"threads of one service and share its gomemcache client, which keeps %d idle connections (one fewer than the requests that "+
				"may wait for the lock at once). gomemcache bounds only the connections it keeps idle: a request that finds none dials "+
				"another, so none waits for a connection. Short critical sections, no fault.", poolSize),
			Topology: cluster.MemcachedTopology,
			Workload: runner.Workload{TTL: mcTTL, Work: 10 * time.Millisecond, Duration: 1500 * time.Millisecond, Pool: poolSize},
		},
	}
}
