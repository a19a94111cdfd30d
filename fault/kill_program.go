package fault

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
)

// programConnections are the server-side ids of the connections client
// has open through its links to the lock table's server: a lock program's,
// which it dials itself.
func programConnections(ctx context.Context, env *Env, killer cluster.ConnectionKiller, client int) ([]int64, error) {
	var ids []int64
	for _, l := range env.Links(client) {
		for _, port := range l.UpstreamPorts() {
			some, err := killer.ConnectionsFrom(ctx, port)
			if err != nil {
				return nil, fmt.Errorf("find the connections of client %d: %w", client, err)
			}
			ids = append(ids, some...)
		}
	}
	return ids, nil
}
