package fault

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
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

// About: its kind's effect is a loss: a lock bound to a connection is gone
// on the server while its holder still believes it holds it. Inject says
// what it did to this lock (observe): a loss only when a killed connection
// held the lock in its session, which the server frees with it; a stall at
// most when the lock lives in a row, which outlives the connection.
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
	key := "lock"
	if env.Key != nil {
		key = env.Key()
	}
	held, heldErr := holding(ctx, killer, ids, key)
	for _, id := range ids {
		// One gone already is no error; one still there is waited for.
		if err := killer.KillConnection(ctx, id); err != nil {
			return nil, fmt.Errorf("kill connection %d of client %d: %w", id, f.Client, err)
		}
	}
	effect, why := connectionEffect(held, heldErr)
	observe(ctx, effect, why)
	return once(func() error { return nil }), nil
}

// holding is the first of ids that holds key's lock in its session, or -1.
func holding(ctx context.Context, killer cluster.ConnectionKiller, ids []int64, key string) (int64, error) {
	for _, id := range ids {
		held, err := killer.Holds(ctx, id, key)
		if err != nil || held {
			return id, err
		}
	}
	return -1, nil
}

// connectionEffect is what killing a client's connections did to the lock:
// a loss when one of them, held, held the lock in its session, which the
// server freed with it; a stall otherwise (a lock in a row outlives its
// connection), which holds up the client but loses nothing. When it could
// not be read (err), a stall too: not enough to call an overlap
// inherent, nor to prove it the lock's own.
func connectionEffect(held int64, err error) (history.Effect, string) {
	switch {
	case err != nil:
		return history.EffectStall, fmt.Sprintf("what the connections held could not be read (%v): counted as a stall, not a loss", err)
	case held >= 0:
		return history.EffectLoss, fmt.Sprintf("connection %d held the lock in its session: the server freed it with the connection", held)
	}
	return history.EffectStall, "no killed connection held the lock in its session (a lock in a row outlives its connection): a stall at most"
}
