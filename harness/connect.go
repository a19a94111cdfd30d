package harness

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
)

// ClientOptions describe a client made by Connect.
type ClientOptions struct {
	ID      int
	TTL     time.Duration // the lease TTL locks are asked to use; 0 means 300 ms
	Timeout time.Duration // Redis timeouts; 0 means 1 s
	Key     string        // the lock key, for faults at the command that took it; "" means "lock"
	// Direct dials the nodes without network links, so no fault reaches it.
	Direct bool
}

// Connect makes a client of cl outside any run, for testing or benchmarking
// a lock on its own. Close it when done.
func Connect(ctx context.Context, cl *cluster.Cluster, opts ClientOptions) (*Client, error) {
	if opts.TTL == 0 {
		opts.TTL = 300 * time.Millisecond
	}
	if opts.Timeout == 0 {
		opts.Timeout = time.Second
	}
	h, _ := history.New("") // in memory: cannot fail
	cfg := clientConfig{id: opts.ID, ttl: opts.TTL, key: opts.Key, timeout: opts.Timeout, history: h, points: NewFailpoints(nil)}
	if opts.Direct {
		cfg.inventory = cl.Inventory().Addr()
		for _, n := range cl.LockNodes() {
			cfg.nodes = append(cfg.nodes, n.Addr())
		}
		if cl.EtcdCluster() != nil {
			cfg.etcd, cfg.nodes = cfg.nodes, nil // etcd members, not Redis nodes
		}
		if cl.ZooKeeperEnsemble() != nil {
			cfg.zookeeper, cfg.nodes = cfg.nodes, nil // ZooKeeper servers, not Redis nodes
		}
		if len(cfg.nodes) > 0 {
			cfg.master = cfg.nodes[0]
		}
		if db := cl.LockDatabase(); db != nil && cluster.Dialect(db.Driver()) == cluster.Pgx {
			var err error
			if cfg.lockPG, err = lockPGConfig(db.DSN(), cfg.timeout); err != nil {
				return nil, err
			}
		} else if db != nil {
			var err error
			if cfg.lockDB, err = lockDBConfig(db.DSN(), cfg.timeout); err != nil {
				return nil, err
			}
		}
		return newClient(ctx, cfg), nil
	}
	client, _, err := connect(ctx, cl, cfg)
	return client, err
}

// Join makes client opts.ID of a run on cl, with one network link per lock
// node, recording into h and struck by the run's failpoints. The runner
// calls it; a test of a lock on its own calls Connect.
func Join(ctx context.Context, cl *cluster.Cluster, opts ClientOptions, h *history.Recorder, points *Failpoints) (*Client, []*network.Link, error) {
	return connect(ctx, cl, clientConfig{id: opts.ID, ttl: opts.TTL, key: opts.Key, timeout: opts.Timeout, history: h, points: points})
}

// connect completes cfg with one link per lock master for client cfg.id and
// makes the client.
func connect(ctx context.Context, cl *cluster.Cluster, cfg clientConfig) (*Client, []*network.Link, error) {
	var links []*network.Link
	for _, n := range cl.LockNodes() {
		l, err := cl.Network().Link(ctx, fmt.Sprintf("c%d-%s", cfg.id, n.Name()), n.Addr())
		if err != nil {
			return nil, nil, err
		}
		links = append(links, l)
		cfg.nodes = append(cfg.nodes, l.Addr())
		cfg.direct = append(cfg.direct, n.Addr())
	}
	if db := cl.LockDatabase(); db != nil && cluster.Dialect(db.Driver()) == cluster.Pgx {
		// The postgres topology's one lock node, as below for MariaDB.
		pgCfg, err := lockPGConfig(db.DSN(), cfg.timeout)
		if err != nil {
			return nil, nil, err
		}
		l, err := cl.Network().Link(ctx, fmt.Sprintf("c%d-sql", cfg.id), net.JoinHostPort(pgCfg.Host, strconv.Itoa(int(pgCfg.Port))))
		if err != nil {
			return nil, nil, err
		}
		links = append(links, l)
		if pgCfg.Host, pgCfg.Port, err = splitHostPort(l.Addr()); err != nil {
			return nil, nil, err
		}
		cfg.lockPG = pgCfg
	} else if db != nil {
		// The SQL topology's one lock node: the lock table's server.
		sqlCfg, err := lockDBConfig(db.DSN(), cfg.timeout)
		if err != nil {
			return nil, nil, err
		}
		l, err := cl.Network().Link(ctx, fmt.Sprintf("c%d-sql", cfg.id), sqlCfg.Addr)
		if err != nil {
			return nil, nil, err
		}
		links = append(links, l)
		sqlCfg.Addr, cfg.lockDB = l.Addr(), sqlCfg
	}
	if cl.EtcdCluster() != nil {
		// The links go to etcd members, which the client dials with an
		// etcd client rather than Redis ones.
		cfg.etcd, cfg.nodes, cfg.direct = cfg.nodes, nil, nil
	}
	if cl.ZooKeeperEnsemble() != nil {
		// The same for the ZooKeeper servers, which it dials with a
		// ZooKeeper session.
		cfg.zookeeper, cfg.nodes, cfg.direct = cfg.nodes, nil, nil
	}
	if len(cfg.nodes) > 0 {
		cfg.master = cfg.nodes[0]
	}
	cfg.inventory = cl.Inventory().Addr()
	if rs := cl.ReplicaSet(); rs != nil {
		// Sentinel reports real addresses; this client dials each node
		// through its own link to it.
		byNode, index := map[string]string{}, map[string]int{}
		for i, n := range cl.LockNodes() {
			byNode[n.Addr()], index[n.Addr()] = links[i].Addr(), i
		}
		cfg.nodes, cfg.sentinels = nil, rs.SentinelAddrs()
		// Sentinel names the master only to the dialer: what it dials
		// tells the history which data node the client's commands reach.
		dialled := new(atomic.Int32)
		dialled.Store(-1)
		cfg.dialled = dialled
		cfg.failover = func(opts *redis.Options) *redis.Client {
			return rs.FailoverClient(opts, func(ctx context.Context, addr string) (net.Conn, error) {
				if i, ok := index[addr]; ok {
					dialled.Store(int32(i))
				}
				if via, ok := byNode[addr]; ok {
					addr = via
				}
				var d net.Dialer
				return d.DialContext(ctx, "tcp", addr)
			})
		}
		cfg.direct = nil
		cfg.probeFailover = func(opts *redis.Options) *redis.Client { return rs.FailoverClient(opts, nil) }
	}
	if db := cl.MariaDB(); db != nil {
		cfg.mariaDSN = db.DSN()
	}
	return newClient(ctx, cfg), links, nil
}

// lockDBConfig is the lock table server's DSN as a client dials it: every
// timeout set to timeout, so that a cut or a black hole surfaces as an
// error, as a Redis client's read timeout does.
func lockDBConfig(dsn string, timeout time.Duration) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("lock database: %w", err)
	}
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = timeout, timeout, timeout
	// An UPDATE that matches a row reports it even when nothing changed.
	cfg.ClientFoundRows = true
	// The driver logs a connection that broke under a fault to stderr; the
	// lock gets the error all the same, and the history records it.
	cfg.Logger = &mysql.NopLogger{}
	// Arguments are written into the statement, so that a statement with
	// arguments is one exchange (sqlConn strikes it once), not a prepare,
	// an execute and a close.
	cfg.InterpolateParams = true
	return cfg, nil
}

// lockPGConfig is lockDBConfig for PostgreSQL: the connect timeout is
// timeout, and each read and write of a connection gives up after timeout
// too (openPG), since pgx has no read timeout of its own.
func lockPGConfig(dsn string, timeout time.Duration) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("lock database: %w", err)
	}
	cfg.ConnectTimeout = timeout
	return cfg, nil
}

// splitHostPort splits a link's host:port as pgx's config holds them.
func splitHostPort(addr string) (string, uint16, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("lock database: %w", err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("lock database: port of %s: %w", addr, err)
	}
	return host, uint16(p), nil
}
