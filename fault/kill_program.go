package fault

import (
	"context"
	"fmt"
)

// programConnections are the server-side ids of the connections client
// has open through its links to the lock table's server: a lock program's,
// which it dials itself.
func programConnections(ctx context.Context, env *Env, client int) ([]int64, error) {
	db := env.Cluster.LockDatabase()
	var ids []int64
	for _, l := range env.Links(client) {
		for _, port := range l.UpstreamPorts() {
			rows, err := db.Admin().QueryContext(ctx, env.Cluster.SQLDialect().ConnectionsFrom(port))
			if err != nil {
				return nil, fmt.Errorf("find the connections of client %d: %w", client, err)
			}
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return nil, err
				}
				ids = append(ids, id)
			}
			if err := rows.Close(); err != nil {
				return nil, err
			}
		}
	}
	return ids, nil
}
