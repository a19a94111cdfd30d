package fault

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/network"
)

// DropConnection closes one client's open connections to the lock nodes,
// once, as a NAT table flush, a load balancer's restart or a server's
// client timeout does: toxiproxy disables the client's links, which closes
// every connection through them, and enables them again at once, so new
// connections succeed. What a command in flight did on the node is unknown
// to the client.
type DropConnection struct{ Client int }

func (f DropConnection) String() string {
	return fmt.Sprintf("drop the connections of client %d to the lock nodes (toxiproxy closes them; new ones succeed at once)", f.Client)
}

// About: its effect is a stall: a command in flight fails, its outcome
// unknown, and the client must dial again.
func (f DropConnection) About() About { return onConnections("drop-connection", f.Client) }

// Inject closes the connections; there is nothing left to heal.
func (f DropConnection) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	links, err := env.linksTo(f, f.Client, nil)
	if err != nil {
		return nil, err
	}
	reopen, err := env.Cluster.Network().Cut(ctx, links...)
	if err != nil {
		return nil, err
	}
	if err := reopen(); err != nil {
		return nil, fmt.Errorf("reopen the links of client %d: %w", f.Client, err)
	}
	return once(func() error { return nil }), nil
}
