package fault

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/network"
)

// Evict fills the memory of a cache's server with a writer's items until
// the server evicts the lock's item by its LRU, as a busy cache does with
// a held lock. It is real: the items are written, and the server's own
// eviction drops the lock. Only a service that evicts can suffer it
// (cluster.Evicter: memcached).
type Evict struct {
	// Key is the lock's key; "" means "lock", the workload's default.
	Key string
}

func (f Evict) key() string {
	if f.Key == "" {
		return "lock"
	}
	return f.Key
}

func (f Evict) String() string {
	return fmt.Sprintf("fill the lock node's memory with a writer's items until it evicts the item of lock %q (its LRU)", f.key())
}

// About: its effect is a loss: the lock's item is gone from the node while
// its holder still holds it.
func (Evict) About() About { return onNodes("evict") }

// Inject writes until the lock's item is evicted; there is nothing to
// heal, as after a restart. An eviction that did not happen (no item was
// held, or a recently read item outlived every write: memcached keeps
// the items it was asked for in a part of its LRU that writes do not
// reach) spoils the run: it did not happen as written.
func (f Evict) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	e, ok := env.Cluster.Deployment().(cluster.Evicter)
	if !ok {
		return nil, fmt.Errorf("%s needs a lock service that evicts (memcached), not topology %s", f, env.Cluster.Topology())
	}
	if _, err := e.Evict(ctx, f.key()); err != nil && len(env.clients) > 0 {
		env.clients[0].Spoil(fmt.Sprintf("%s did not evict it: %v", f, err))
	}
	return once(func() error { return nil }), nil
}
