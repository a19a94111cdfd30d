package fault

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/network"
)

// KillLeader kills the server that leads the consensus service at that
// moment (etcd's leader as a majority of the members say, ZooKeeper's as
// it says itself) with SIGKILL; the heal restarts it with its data on the
// same ports, and it rejoins as a follower. Raft and Zab commit every
// acknowledged write on a majority, so the remaining servers elect a
// leader that has them all: unlike a Redis failover (pitfall 10), no lock
// is lost.
type KillLeader struct{}

func (KillLeader) String() string {
	return "kill the leader (SIGKILL), restart it with its data on the same ports"
}

// About: a stall while the cluster elects a new leader; nothing is lost.
func (KillLeader) About() About {
	a := onNodes("kill-leader")
	a.Struck.Role = "leader" // which node leads only the injection learns
	return a
}

// Inject finds the leader and kills it.
func (f KillLeader) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	n, _, err := env.Cluster.Leader(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	if err := n.Kill(); err != nil {
		return nil, err
	}
	// The heal may run after ctx ended; the restart gets its own bound.
	return once(func() error {
		rctx, cancel := context.WithTimeout(context.Background(), restartCap)
		defer cancel()
		return n.Restart(rctx, true)
	}), nil
}
