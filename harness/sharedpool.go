package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness/sqlpool"
	"github.com/locklab/locklab/network"
)

// SharedPool is the SQL pool of one service process whose request threads
// are several clients: each one's SQL() (and DB(), the MariaDB inventory on
// the same server) is this one pool, as a service's one DataSource is. A
// request that waits for the lock while holding a connection then keeps
// the others from the pool, which is what seed 001 warns of. Its
// connections belong to no client: a client's pause, crash or failpoints
// do not reach them (runner.Workload.Pool refuses such faults).
type SharedPool struct {
	pool *sqlpool.Pool
}

// OpenSharedPool opens a pool of size connections to cl's lock table's
// server through a network link of its own, each read and write bounded
// by timeout.
func OpenSharedPool(ctx context.Context, cl *cluster.Cluster, size int, timeout time.Duration) (*SharedPool, error) {
	db := cl.LockDatabase()
	if db == nil {
		return nil, errors.New("shared pool: the topology has no SQL server")
	}
	cfg, err := sqlpool.ParseDSN(cluster.Dialect(db.Driver()), db.DSN(), timeout)
	if err != nil {
		return nil, err
	}
	var l *network.Link
	if l, err = cl.Network().Link(ctx, "service-sql", cfg.Addr()); err != nil {
		return nil, fmt.Errorf("shared pool: %w", err)
	}
	if cfg, err = cfg.Via(l.Addr()); err != nil {
		return nil, err
	}
	pool, err := sqlpool.Open(cfg, nobody{}, size)
	if err != nil {
		return nil, err
	}
	return &SharedPool{pool: pool}, nil
}

// Close closes the pool and every connection it opened.
func (p *SharedPool) Close() { p.pool.Close() }

// nobody owns a shared pool's connections (sqlpool.Client): they never
// pause, and their statements pass no client's failpoints.
type nobody struct{}

func (nobody) WaitResumed(context.Context) error { return nil }

func (nobody) Statement(_ context.Context, _ string, send func() error) error { return send() }

func (nobody) EndTx(_ context.Context, _ string, send func() error) error { return send() }
