package fault

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/network"
)

// KillConnection has the lock table's server kill one client's open
// connections (KILL CONNECTION, through the cluster's admin pool past any
// link), as an administrator, a server's wait_timeout or a proxy's idle
// timeout does. The server rolls back what each connection held: its open
// transaction and row locks, its GET_LOCK locks. The client learns of it
// only at its next request on that connection; new connections succeed.
// SQL topologies only (pg_terminate_backend on PostgreSQL): their
// deployment is a cluster.ConnectionKiller.
type KillConnection struct{ Client int }

func (f KillConnection) String() string {
	return fmt.Sprintf("the server kills the connections of client %d (KILL CONNECTION on MariaDB, pg_terminate_backend on PostgreSQL; new ones succeed)", f.Client)
}

// About: its effect is a loss: a lock bound to a connection is gone on
// the server while its holder still believes it holds it.
func (f KillConnection) About() About { return onConnections("kill-connection", f.Client) }

// Inject kills every connection the client opened that is still open;
// there is nothing to heal.
func (f KillConnection) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	c, err := env.client(f.Client)
	if err != nil {
		return nil, err
	}
	killer, ok := env.Cluster.Deployment().(cluster.ConnectionKiller)
	if !ok {
		return nil, fmt.Errorf("%s needs an SQL topology, not %s", f, env.Cluster.Topology())
	}
	ids := c.SQLConnections()
	if c.Program() {
		// A lock program dials its own connections, whose ids the harness
		// never learns: the server knows them by the ports its links dial
		// from.
		if ids, err = programConnections(ctx, env, killer, f.Client); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(ids) == 0 {
			c.Spoil(fmt.Sprintf("%s found no connection of the lock program open through its links", f))
		}
	}
	for _, id := range ids {
		// One gone already is no error.
		if err := killer.KillConnection(ctx, id); err != nil {
			return nil, fmt.Errorf("kill connection %d of client %d: %w", id, f.Client, err)
		}
	}
	return once(func() error { return nil }), nil
}
