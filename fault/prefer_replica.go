package fault

import (
	"context"
	"fmt"
	"github.com/locklab/locklab/cluster"
	"time"

	"github.com/locklab/locklab/network"
)

// PreferReplica makes a data node of the replicated topology Sentinel's
// first choice for promotion (replica-priority 1; others keep 100), as an
// operator does for a replica in the main data centre. Sentinel ranks
// priority before replication offset.
type PreferReplica struct{ Node int }

func (f PreferReplica) String() string {
	return fmt.Sprintf("make data node %d Sentinel's preferred replica (replica-priority 1)", f.Node)
}

// About: it only sets the stage for a failover.
func (f PreferReplica) About() About {
	return onNodes("prefer-replica", f.Node)
}

// Inject sets the priority; the heal puts back the default.
func (f PreferReplica) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	if _, err := env.replicaSet("PreferReplica"); err != nil {
		return nil, err
	}
	node, err := env.node(f.Node)
	if err != nil {
		return nil, err
	}
	n, ok := node.(cluster.RedisNode)
	if !ok {
		return nil, fmt.Errorf("%s needs a Redis node; %s is not one", f, node.Name())
	}
	if err := n.Admin().ConfigSet(ctx, "replica-priority", "1").Err(); err != nil {
		return nil, fmt.Errorf("prefer %s: %w", n.Name(), err)
	}
	return once(func() error {
		hctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return n.Admin().ConfigSet(hctx, "replica-priority", "100").Err()
	}), nil
}
