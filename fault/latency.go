package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/network"
)

// Latency delays every byte between one client and some lock nodes (all
// when Nodes is empty).
type Latency struct {
	Client int
	Delay  time.Duration
	Nodes  []int // indexes of the lock nodes; empty means all
}

func (f Latency) String() string {
	nodes := "the lock nodes"
	if len(f.Nodes) > 0 {
		nodes = fmt.Sprintf("lock nodes %v", f.Nodes)
	}
	return fmt.Sprintf("add %s latency between client %d and %s", f.Delay, f.Client, nodes)
}

// About: its effect is a delay: the client's commands, its renewals too, come late,
// and so do the replies that grant it the lock.
func (f Latency) About() About {
	return onLinks("latency", f.Client, f.Nodes)
}

// Inject adds the latency toxics.
func (f Latency) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	links, err := env.linksTo(f, f.Client, f.Nodes)
	if err != nil {
		return nil, err
	}
	return env.Cluster.Network().Delay(ctx, f.Delay, 0, links...)
}
