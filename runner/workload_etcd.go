package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/service/etcd"
)

// sectionEtcd is the critical section when the inventory is a key of the
// etcd topology (EtcdResource): read the stock, work, write the stock read
// minus one. A lease that offers a guard (etcd.Guarded) has the write done
// in a transaction that commits only while it owns the lock, and a refused
// write is recorded as rejected, as a fenced write is; otherwise the write
// is a plain Put, as code that trusts its lock does (etcd.WriteStock).
func (w *worker) sectionEtcd(ctx context.Context, lease harness.Lease) {
	ctx, leave := w.c.Enter(ctx, failpoint.PhaseSection)
	defer leave()
	op := history.Op{Client: w.c.ID(), Kind: history.KindSection, Call: w.h.Now(), Token: lease.Token(), Result: models.NoWrite}
	rctx, cancel := context.WithTimeout(ctx, w.c.Timeout())
	observed, err := etcd.ReadStock(rctx, w.c)
	cancel()
	if err != nil {
		return // nothing was read: no section
	}
	defer func() {
		op.Return = w.h.Now()
		w.h.Add(op)
	}()
	op.Observed = observed
	if !w.work(ctx, &op) {
		return
	}
	if observed <= 0 {
		return
	}
	op.Written = observed - 1
	wctx, cancel := context.WithTimeout(ctx, w.c.Timeout())
	defer cancel()
	wrote, err := etcd.WriteStock(wctx, w.c, lease, op.Written)
	switch {
	case err == nil && wrote:
		op.Result = models.Wrote
	case err == nil:
		op.Result = models.Rejected
	case errors.Is(err, harness.ErrNotSent), w.c.Crashed():
		op.Error = err.Error()
	default:
		op.Result, op.Error = models.WriteUnknown, err.Error()
	}
}

// stockOf is the deployment of r's cluster as the keeper of its own
// stock (cluster.Stock): etcd's, for the etcd resource.
func (r *run) stockOf() (cluster.Stock, error) {
	s, ok := r.cluster.Deployment().(cluster.Stock)
	if !ok {
		return nil, fmt.Errorf("the etcd resource needs topology %s, not %s", cluster.EtcdTopology, r.cluster.Topology())
	}
	return s, nil
}

// setupEtcdStock puts the starting stock in the etcd resource.
func (r *run) setupEtcdStock(ctx context.Context) error {
	s, err := r.stockOf()
	if err != nil {
		return err
	}
	return s.SetStock(ctx, r.w.Stock)
}

// etcdStockLeft reads what is left of the etcd resource, past any link.
func (r *run) etcdStockLeft(ctx context.Context) (int64, error) {
	s, err := r.stockOf()
	if err != nil {
		return 0, err
	}
	return s.ReadStock(ctx)
}
