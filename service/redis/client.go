package redis

import (
	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/harness"
)

// Of is c's connection to the Redis topology's lock master (on replicated,
// the master Sentinel names), through c's links, crash and pause, and the
// failpoints on the lock's commands: what a lock on one master sends its
// commands on, as memcached.Of is a memcached lock's. It is nil on the
// topologies of other services.
func Of(c *harness.Client) *goredis.Client { return c.Redis() }

// Nodes is c's connection to each lock master of the redlock topology, in
// order; on the other Redis topologies it holds just Of(c).
func Nodes(c *harness.Client) []*goredis.Client { return c.Nodes() }
