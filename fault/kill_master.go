package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
)

// KillMaster kills the current master of the replicated topology, and the
// data nodes in Also, with SIGKILL, then waits until Sentinel has promoted a
// replica (observed, not slept for). The heal restarts the killed nodes
// empty; Sentinel turns them into replicas of the new master.
type KillMaster struct{ Also []int }

func (f KillMaster) String() string {
	also := ""
	if len(f.Also) > 0 {
		also = fmt.Sprintf(" and data nodes %v", f.Also)
	}
	return fmt.Sprintf("kill the master%s (SIGKILL), wait for Sentinel's failover; restart them empty as replicas", also)
}

// About: its effect is a loss: the promoted replica may lack the lock's key.
func (f KillMaster) About() About {
	a := onNodes("kill-master", f.Also...)
	a.Struck.Role = "master" // which node is master only the injection learns
	return a
}

// Inject kills and waits for the promotion.
func (f KillMaster) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	rs, err := env.replicaSet("KillMaster")
	if err != nil {
		return nil, err
	}
	master, err := rs.Master(ctx)
	if err != nil {
		return nil, err
	}
	killed := []cluster.Node{master}
	for _, i := range f.Also {
		n, err := env.node(i)
		if err != nil {
			return nil, err
		}
		killed = append(killed, n)
	}
	restart := once(func() error {
		rctx, cancel := context.WithTimeout(context.Background(), restartCap)
		defer cancel()
		var errs []error
		for _, n := range killed {
			errs = append(errs, n.Restart(rctx, false))
		}
		return errors.Join(errs...)
	})
	for _, n := range killed {
		if err := n.Kill(); err != nil {
			restart()
			return nil, err
		}
	}
	start := env.history.Now()
	to, took, err := rs.AwaitFailover(ctx, master)
	if err != nil {
		restart()
		return nil, fmt.Errorf("await failover: %w", err)
	}
	failover := f.About()
	env.history.Add(history.Op{Client: -1, Kind: history.KindFault, Call: start, Return: env.history.Now(), Fault: history.FaultFailover,
		FaultKind: failover.Name, Part: history.PartFailover, Target: env.target(failover.Struck),
		Effect: history.EffectLoss, Detail: fmt.Sprintf("Sentinel promoted %s in place of %s after %s", to.Name(), master.Name(), took.Round(time.Millisecond))})
	return restart, nil
}
