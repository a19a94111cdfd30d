package fault

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/network"
)

// BlackHole silently drops one direction of one client's traffic to the lock
// nodes: commands time out and their outcome is unknown.
type BlackHole struct {
	Client    int
	Direction network.Direction
}

func (f BlackHole) String() string {
	return fmt.Sprintf("black-hole the %s traffic of client %d (bytes dropped, connections kept open)", f.Direction, f.Client)
}

// About: its effect is a stall: the client's commands, its renewals too, time out.
func (f BlackHole) About() About {
	return onLinks("black-hole", f.Client, nil)
}

// Inject adds the timeout toxics.
func (f BlackHole) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	links, err := env.linksTo(f, f.Client, nil)
	if err != nil {
		return nil, err
	}
	return env.Cluster.Network().BlackHole(ctx, f.Direction, links...)
}
