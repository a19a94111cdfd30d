package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// sectionEtcd is the critical section when the inventory is a key of the
// etcd topology (EtcdResource): read the stock, work, write the stock read
// minus one. A lease that offers a guard (harness.EtcdGuarded) has the
// write done in a transaction that commits only while it owns the lock,
// and a refused write is recorded as rejected, as a fenced write is;
// otherwise the write is a plain Put, as code that trusts its lock does.
func (w *worker) sectionEtcd(ctx context.Context, lease harness.Lease) {
	ctx, leave := w.c.Enter(ctx, failpoint.PhaseSection)
	defer leave()
	cli := w.c.Etcd()
	op := history.Op{Client: w.c.ID(), Kind: history.KindSection, Call: w.h.Now(), Token: lease.Token(), Result: models.NoWrite}
	observed, err := etcdStock(ctx, cli, w.c.Timeout())
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
	put := clientv3.OpPut(cluster.EtcdStockKey, strconv.FormatInt(op.Written, 10))
	wctx, cancel := context.WithTimeout(ctx, w.c.Timeout())
	defer cancel()
	wrote := true
	if g, ok := lease.(harness.EtcdGuarded); ok {
		var resp *clientv3.TxnResponse
		if resp, err = cli.Txn(wctx).If(g.Guard()).Then(put).Commit(); err == nil {
			wrote = resp.Succeeded
		}
	} else {
		_, err = cli.Do(wctx, put)
	}
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

// etcdStock reads the stock from the etcd resource within timeout.
func etcdStock(ctx context.Context, cli *clientv3.Client, timeout time.Duration) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return readEtcdStock(ctx, cli)
}

// readEtcdStock reads the stock key.
func readEtcdStock(ctx context.Context, cli *clientv3.Client) (int64, error) {
	resp, err := cli.Get(ctx, cluster.EtcdStockKey)
	if err != nil {
		return 0, fmt.Errorf("read the stock: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return 0, errors.New("read the stock: no stock key")
	}
	return strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
}

// setupEtcdStock puts the starting stock in the etcd resource.
func (r *run) setupEtcdStock(ctx context.Context) error {
	set := r.cluster.EtcdCluster()
	if set == nil {
		return fmt.Errorf("the etcd resource needs topology %s, not %s", cluster.EtcdTopology, r.cluster.Topology())
	}
	_, err := set.Admin().Put(ctx, cluster.EtcdStockKey, strconv.FormatInt(r.w.Stock, 10))
	return err
}

// etcdStockLeft reads what is left of the etcd resource, past any link.
func (r *run) etcdStockLeft(ctx context.Context) (int64, error) {
	set := r.cluster.EtcdCluster()
	if set == nil {
		return 0, fmt.Errorf("the etcd resource needs topology %s", cluster.EtcdTopology)
	}
	return readEtcdStock(ctx, set.Admin())
}
