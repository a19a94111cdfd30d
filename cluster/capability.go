package cluster

import (
	"context"
	"time"

	"github.com/locklab/locklab/network"
)

// Replicas is a Deployment whose lock nodes are a master and its replicas,
// watched by servers that promote a replica when the master fails (Redis
// Sentinel): what fault.KillMaster, CutReplication and PreferReplica
// strike. Its nodes are among the Deployment's Nodes.
type Replicas interface {
	// Master is the data node that is master now, as a majority of the
	// watchers name it; it fails when no majority agrees, as in the middle
	// of a failover.
	Master(ctx context.Context) (Node, error)
	// AwaitFailover waits until a master other than from is named, and
	// returns it with the time taken since the call, observed rather than
	// slept for.
	AwaitFailover(ctx context.Context, from Node) (to Node, took time.Duration, err error)
	// CutReplication cuts node's replication from the master, and nothing
	// else, until the heal.
	CutReplication(ctx context.Context, node Node) (network.Heal, error)
	// PreferReplica makes node the watchers' first choice for promotion,
	// until the heal.
	PreferReplica(ctx context.Context, node Node) (network.Heal, error)
}

// TTLJumper is a Deployment whose keys expire by their time to live, which
// it can shorten at once on one node, as a jump of that node's clock
// would: how fault.ClockJump simulates a jump where a real one cannot be
// made (libfaketime breaks redis-server's start-up).
type TTLJumper interface {
	// JumpTTLs expires what a jump of by on node would expire and
	// shortens every other key's time to live by by.
	JumpTTLs(ctx context.Context, node Node, by time.Duration) error
}
