package fault

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/network"
)

// Partition cuts one client off from some lock nodes (all when Nodes is
// empty): its connections are reset and new ones refused (toxiproxy disables
// its links).
type Partition struct {
	Client int
	Nodes  []int // indexes of the lock nodes; empty means all
}

func (f Partition) String() string {
	nodes := "the lock nodes"
	if len(f.Nodes) > 0 {
		nodes = fmt.Sprintf("lock nodes %v", f.Nodes)
	}
	return fmt.Sprintf("partition client %d from %s (connections reset and refused)", f.Client, nodes)
}

// About: its effect is a stall: the client's commands fail, its renewals too.
func (f Partition) About() About {
	return onLinks("partition", f.Client, f.Nodes)
}

// Inject cuts the links.
func (f Partition) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	links, err := env.linksTo(f, f.Client, f.Nodes)
	if err != nil {
		return nil, err
	}
	return env.Cluster.Network().Cut(ctx, links...)
}
