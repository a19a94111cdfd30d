package fault

import (
	"context"
	"errors"
	"fmt"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
)

// CutReplication cuts the replication of some replicas (data-node indexes
// of the replicated topology) from the master: writes stop reaching them,
// as with a slow or broken replica link. A failover ends it early.
type CutReplication struct{ Replicas []int }

func (f CutReplication) String() string {
	return fmt.Sprintf("cut replication to data nodes %v (their link to the master is disabled)", f.Replicas)
}

// About: it only sets the stage: the master still grants and renews; what
// a failover then loses is the failover's.
func (f CutReplication) About() About {
	// The links cut are the replicas' to their master, no client's.
	return About{Kind: Named("cut-replication"), Client: -1, Struck: history.Target{Type: history.TargetLink, Nodes: f.Replicas}}
}

// Inject cuts every named replica's link.
func (f CutReplication) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	rs, err := env.replicaSet("CutReplication")
	if err != nil {
		return nil, err
	}
	var heals []network.Heal
	healAll := func() error {
		var errs []error
		for _, h := range heals {
			errs = append(errs, h())
		}
		return errors.Join(errs...)
	}
	for _, i := range f.Replicas {
		n, err := env.node(i)
		if err == nil {
			var h network.Heal
			if h, err = rs.CutReplication(ctx, n); err == nil {
				heals = append(heals, h)
				continue
			}
		}
		healAll()
		return nil, err
	}
	return once(healAll), nil
}
