package runner

import (
	"context"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/history"
	redisservice "github.com/locklab/locklab/service/redis"
)

// NewPool makes a pool of warm clusters for Options.Pool, which resets
// the inventory node with each deployment. Close it when the runs are
// done: it stops every server it kept.
func NewPool() *cluster.Pool {
	return cluster.NewPool(redisservice.ResetInventory)
}

// takeCluster starts cfg's cluster, or takes a warm one from pool.
func takeCluster(ctx context.Context, pool *cluster.Pool, cfg cluster.Config) (*cluster.Cluster, error) {
	if pool == nil {
		return cluster.Start(ctx, cfg)
	}
	return pool.Take(ctx, cfg)
}

// giveBack closes cl, or gives it back to pool, to reuse when its run
// spared every server.
func giveBack(pool *cluster.Pool, cl *cluster.Cluster, spared bool) error {
	if pool == nil {
		return cl.Close()
	}
	pool.Put(cl, spared)
	return nil
}

// sparesServers reports whether no fault of s, scheduled or armed at a
// failpoint, nor any the history records, could strike a server: what a
// warm deployment needs to serve another run (fault.Kind.SparesServers).
func sparesServers(s Scenario, ops []history.Op) bool {
	for _, f := range s.Faults {
		if !f.Fault.About().SparesServers() {
			return false
		}
	}
	for _, fp := range s.Failpoints {
		if !fp.About().SparesServers() {
			return false
		}
	}
	for _, op := range ops {
		if op.Kind == history.KindFault && !fault.Spares(op.FaultKind) {
			return false
		}
	}
	return true
}
