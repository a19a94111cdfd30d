package fault

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
)

// KillNode kills a lock node's redis-server with SIGKILL; the heal restarts
// it on the same port, keeping its on-disk data or not.
type KillNode struct {
	Node     int
	KeepData bool
}

func (f KillNode) String() string {
	keep := "empty"
	if f.KeepData {
		keep = "with its on-disk data"
	}
	return fmt.Sprintf("kill lock node %d (SIGKILL), restart it %s on the same port", f.Node, keep)
}

// About: its effect is a stall while the node is down: whoever needs it, to renew
// or to release, is held up. The restart that heals it is recorded apart,
// as a loss, at the moment it happens: only from then can another client
// take on that node what the killed node held, and even a restart with its
// data may lose the writes it had not yet fsynced (the fault cannot know
// the node's fsync policy).
func (f KillNode) About() About {
	return onNodes("kill-node", f.Node)
}

// restarted labels the record of the restart that heals f, with what the
// node lost.
func (f KillNode) restarted() string {
	if f.KeepData {
		return fmt.Sprintf("lock node %d restarted with its on-disk data (what it had not fsynced is lost)", f.Node)
	}
	return fmt.Sprintf("lock node %d restarted empty (every key it held is lost)", f.Node)
}

// Inject kills the node.
func (f KillNode) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	n, err := env.node(f.Node)
	if err != nil {
		return nil, err
	}
	if err := n.Kill(); err != nil {
		return nil, err
	}
	// The heal may run after ctx ended; the restart gets its own bound.
	return once(func() error {
		rctx, cancel := context.WithTimeout(context.Background(), restartCap)
		defer cancel()
		start := env.history.Now()
		if err := n.Restart(rctx, f.KeepData); err != nil {
			return err
		}
		label, effect := f.restarted(), history.EffectLoss
		if s := env.Cluster.Topology().Service(); s == cluster.ZooKeeper || s == cluster.Etcd {
			// One server of three comes back and catches up from the
			// quorum, which kept every lock: nothing is lost.
			label = fmt.Sprintf("lock node %d restarted and caught up from the quorum, which kept every lock", f.Node)
			effect = history.EffectStage
		}
		restart := f.About()
		env.history.Add(history.Op{Client: -1, Kind: history.KindFault, Call: start, Return: env.history.Now(),
			Fault: label, FaultKind: restart.Name, Part: history.PartRestart, Target: env.target(restart.Struck), Effect: effect})
		return nil
	}), nil
}
