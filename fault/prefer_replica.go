package fault

import (
	"context"
	"fmt"

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
	rs, err := env.replicaSet("PreferReplica")
	if err != nil {
		return nil, err
	}
	node, err := env.node(f.Node)
	if err != nil {
		return nil, err
	}
	heal, err := rs.PreferReplica(ctx, node)
	if err != nil {
		return nil, err
	}
	return once(heal), nil
}
