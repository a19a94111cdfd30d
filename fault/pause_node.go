package fault

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/network"
)

// PauseNode stops a lock node's redis-server with SIGSTOP until the heal
// sends SIGCONT: a real process freeze.
type PauseNode struct{ Node int }

func (f PauseNode) String() string {
	return fmt.Sprintf("pause lock node %d (SIGSTOP, then SIGCONT)", f.Node)
}

// About: its effect is a stall of every client: none gets an answer from the node,
// and keys keep expiring by the time that passes meanwhile.
func (f PauseNode) About() About {
	return onNodes("pause-node", f.Node)
}

// Inject stops the node.
func (f PauseNode) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	n, err := env.node(f.Node)
	if err != nil {
		return nil, err
	}
	if err := n.Pause(); err != nil {
		return nil, err
	}
	return once(n.Resume), nil
}
