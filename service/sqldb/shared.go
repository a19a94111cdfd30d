package sqldb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// OpenSharedPool opens the SQL pool of one service process whose request
// threads are several clients (harness.ClientOptions.Pool): size
// connections to cl's lock table's server through a network link of its
// own, each read and write bounded by timeout. Each client's handle (and
// DB(), the MariaDB inventory on the same server) is then this one pool,
// as a service's one DataSource is. A request that waits for the lock
// while holding a connection keeps the others from the pool, which is
// what seed 001 warns of. Its connections belong to no client: a client's
// pause, crash or failpoints do not reach them (runner.Workload.Pool
// refuses such faults). Close it once every client is closed.
func OpenSharedPool(ctx context.Context, cl *cluster.Cluster, size int, timeout time.Duration) (*Conn, error) {
	d, ok := cl.Deployment().(*deployment)
	if !ok {
		return nil, errors.New("shared pool: the topology has no SQL server")
	}
	cfg, err := parseDSN(d.dialect, d.db.DSN(), timeout)
	if err != nil {
		return nil, err
	}
	l, err := cl.Network().Link(ctx, "service-sql", cfg.Addr())
	if err != nil {
		return nil, fmt.Errorf("shared pool: %w", err)
	}
	if cfg, err = cfg.Via(l.Addr()); err != nil {
		return nil, err
	}
	p, err := openPool(cfg, nobody{}, size)
	if err != nil {
		return nil, err
	}
	return &Conn{p: p}, nil
}

// nobody owns a shared pool's connections (user): they never pause, and
// their statements pass no client's failpoints.
type nobody struct{}

func (nobody) WaitResumed(context.Context) error { return nil }

func (nobody) Statement(_ context.Context, _ string, send func() error) error { return send() }

func (nobody) StatementRows(_ context.Context, _ string, send func() (int64, error)) error {
	_, err := send()
	return err
}

func (nobody) EndTx(_ context.Context, _ string, send func() error) error { return send() }

// OpenSharedPool is OpenSharedPool on the MariaDB topology's server
// (service.Pooler).
func (MariaDB) OpenSharedPool(ctx context.Context, cl *cluster.Cluster, size int, timeout time.Duration) (harness.Handle, error) {
	return openShared(ctx, cl, size, timeout)
}

// OpenSharedPool is OpenSharedPool on the PostgreSQL topology's server
// (service.Pooler).
func (Postgres) OpenSharedPool(ctx context.Context, cl *cluster.Cluster, size int, timeout time.Duration) (harness.Handle, error) {
	return openShared(ctx, cl, size, timeout)
}

// openShared is OpenSharedPool as a harness.Handle: nil, not a nil *Conn,
// after an error.
func openShared(ctx context.Context, cl *cluster.Cluster, size int, timeout time.Duration) (harness.Handle, error) {
	c, err := OpenSharedPool(ctx, cl, size, timeout)
	if err != nil {
		return nil, err
	}
	return c, nil
}
