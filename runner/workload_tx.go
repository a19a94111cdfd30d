package runner

import (
	"context"
	"database/sql"
	"errors"

	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/service/sqldb"
)

// The statements of a critical section on the SQL inventory, in its own
// transaction or in the lock's, with MySQL's placeholders (stockDialect
// rewrites them for PostgreSQL).
const (
	readStock  = "SELECT stock FROM locklab.inventory WHERE id = 1"
	writeStock = "UPDATE locklab.inventory SET stock = ? WHERE id = 1"
)

// stockDialect is the SQL of the workload's inventory.
func (w *worker) stockDialect() sqldb.Dialect {
	if w.w.Resource == PostgresResource {
		return sqldb.Pgx
	}
	return sqldb.MySQL
}

// stockIsolation is the isolation of a section's own transaction: each
// server's default, under which an UPDATE writes over a sale committed
// since the read (InnoDB's REPEATABLE READ, PostgreSQL's READ COMMITTED;
// PostgreSQL's REPEATABLE READ would refuse it, a guard no lock gave).
func (w *worker) stockIsolation() sql.IsolationLevel {
	if w.w.Resource == PostgresResource {
		return sql.LevelReadCommitted
	}
	return sql.LevelRepeatableRead
}

// sectionTx is the critical section when the inventory is an SQL row: one
// transaction that reads the stock, works, and writes the stock it read
// minus one. It releases the lock before COMMIT when the workload says so,
// and reports whether it did.
func (w *worker) sectionTx(ctx context.Context, lease harness.Lease) (released bool) {
	if tl, ok := lease.(harness.TxLease); ok {
		return w.sectionLeaseTx(ctx, tl)
	}
	op := history.Op{Client: w.c.ID(), Kind: history.KindSection, Call: w.h.Now(), Token: lease.Token(), Result: models.NoWrite}
	tx, err := w.c.DB().BeginTx(ctx, &sql.TxOptions{Isolation: w.stockIsolation()})
	if err != nil {
		return false
	}
	defer tx.Rollback() // after a commit this does nothing
	if err := tx.QueryRowContext(ctx, readStock).Scan(&op.Observed); err != nil {
		return false // nothing was read: no section
	}
	defer func() {
		op.Return = w.h.Now()
		w.h.Add(op)
	}()
	if !w.work(ctx, &op) {
		return false
	}
	rejected := false
	if op.Observed > 0 {
		op.Written = op.Observed - 1
		update, args := writeStock, []any{op.Written}
		_, optimistic := lease.(harness.OptimisticLease)
		if optimistic {
			// The UPDATE reads the newest committed stock, not the
			// transaction's snapshot: it matches only if nobody sold since.
			update, args = update+" AND stock = ?", append(args, op.Observed)
		}
		res, err := tx.ExecContext(ctx, w.stockDialect().Query(update), args...)
		if err != nil {
			op.Error = "update: " + err.Error()
			return false
		}
		// Only the optimistic UPDATE can match no row: a plain one that
		// changes nothing (the stock was already what it writes) still
		// wrote, and a lost update it hides is the checker's to see.
		if n, err := res.RowsAffected(); optimistic && err == nil && n == 0 {
			rejected = true
		}
	}
	if w.w.ReleaseBeforeCommit {
		w.release(ctx, lease, false)
		released = true
	}
	if err := w.c.Failpoint(ctx, failpoint.BeforeCommit); err != nil {
		op.Error = err.Error()
		return released
	}
	err = tx.Commit()
	switch {
	case op.Observed <= 0:
	case rejected:
		op.Result = models.Rejected // nothing was written, whatever the commit did
	case err == nil:
		op.Result = models.Wrote
	case errors.Is(err, sql.ErrTxDone):
		op.Error = err.Error()
	default:
		op.Result, op.Error = models.WriteUnknown, err.Error()
	}
	return released
}

// sectionLeaseTx is the critical section in the lock's own transaction
// (harness.TxLease): it reads and writes the stock in it, and the release
// commits the write with the lock. When the lock's connection is gone, so
// is the write: the server rolled both back, and the UPDATE or the COMMIT
// fails. The workload's ReleaseBeforeCommit has no meaning here, since the
// release is the COMMIT. It reports whether it released the lease, which it
// does once it read the stock.
func (w *worker) sectionLeaseTx(ctx context.Context, lease harness.TxLease) (released bool) {
	op := history.Op{Client: w.c.ID(), Kind: history.KindSection, Call: w.h.Now(), Token: lease.Token(), Result: models.NoWrite}
	tx := lease.Tx()
	if err := tx.QueryRowContext(ctx, readStock).Scan(&op.Observed); err != nil {
		return false // nothing was read: no section
	}
	defer func() {
		op.Return = w.h.Now()
		w.h.Add(op)
	}()
	if !w.work(ctx, &op) {
		return false
	}
	updated := false
	if op.Observed > 0 {
		op.Written = op.Observed - 1
		// An UPDATE that fails is never committed: a failed statement is
		// rolled back, and a connection that failed can commit nothing.
		if _, err := tx.ExecContext(ctx, w.stockDialect().Query(writeStock), op.Written); err != nil {
			op.Error = "update: " + err.Error()
		} else {
			updated = true
		}
	}
	if err := w.c.Failpoint(ctx, failpoint.BeforeCommit); err != nil {
		op.Error = err.Error()
		return false
	}
	err := w.release(ctx, lease, false)
	switch {
	case !updated:
	case err == nil:
		op.Result = models.Wrote
	case errors.Is(err, harness.ErrCrashed):
		op.Error = err.Error()
	default:
		op.Result, op.Error = models.WriteUnknown, err.Error()
	}
	return true
}
