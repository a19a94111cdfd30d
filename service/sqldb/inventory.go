package sqldb

import (
	"context"
	"errors"

	"github.com/locklab/locklab/cluster"
)

// MariaDBInventory keeps a run's inventory in MariaDB, an InnoDB row
// (cluster.ResourceService): on the mariadb topology's own server, or on
// one started beside the lock service (the transaction pitfalls on Redis).
type MariaDBInventory struct{}

// StartResource starts MariaDB on run, unless lock is the mariadb
// topology's server, which then holds the inventory too.
func (MariaDBInventory) StartResource(ctx context.Context, run cluster.RunSession, dir string, lock cluster.Deployment) (cluster.Database, error) {
	if d, ok := lock.(*deployment); ok && d.dialect == MySQL {
		return d.db, nil
	}
	return startMariaDB(ctx, run, dir)
}

// PostgresInventory keeps a run's inventory in the postgres topology's
// server, beside the lock: a lock's transaction can then write it
// (cluster.ResourceService).
type PostgresInventory struct{}

// StartResource finds the postgres topology's server in lock, and starts
// nothing.
func (PostgresInventory) StartResource(_ context.Context, _ cluster.RunSession, _ string, lock cluster.Deployment) (cluster.Database, error) {
	if d, ok := lock.(*deployment); ok && d.dialect == Pgx {
		return d.db, nil
	}
	return nil, errors.New("cluster: an inventory in PostgreSQL needs topology " + string(cluster.PostgresTopology))
}
