package runner_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/service/etcd"
	"github.com/locklab/locklab/service/memcached"
	"github.com/locklab/locklab/service/redis/sentinel"
	"github.com/locklab/locklab/service/sqldb"
	"github.com/locklab/locklab/service/zookeeper"
)

// dirt leaves on cl what a run may leave: a held lock, with its lease or
// session where the service has one.
var dirt = []struct {
	topology cluster.Topology
	leave    func(ctx context.Context, cl *cluster.Cluster) error
}{
	{cluster.Single, redisKey},
	{cluster.Redlock, redisKey},
	{cluster.EtcdTopology, func(ctx context.Context, cl *cluster.Cluster) error {
		admin := etcd.SetOf(cl).Admin()
		lease, err := admin.Grant(ctx, 60)
		if err != nil {
			return err
		}
		_, err = admin.Put(ctx, etcd.KeyPrefix+"lock/1", "held", clientv3.WithLease(lease.ID))
		return err
	}},
	{cluster.ZooKeeperTopology, func(ctx context.Context, cl *cluster.Cluster) error {
		admin := zookeeper.SetOf(cl).Admin()
		for _, p := range []string{zookeeper.LockRoot, zookeeper.LockRoot + "/lock"} {
			if _, err := admin.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
		}
		_, err := admin.Create(zookeeper.LockRoot+"/lock/n-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		return err
	}},
	{cluster.MemcachedTopology, func(ctx context.Context, cl *cluster.Cluster) error {
		reply, err := memcached.Ask(ctx, cl.LockNodes()[0].Addr(), "set lock 0 60 4\r\nheld")
		if err == nil && reply != "STORED" {
			err = fmt.Errorf("set: %q", reply)
		}
		return err
	}},
	{cluster.MariaDBTopology, sqlRow},
	{cluster.PostgresTopology, sqlRow},
}

func redisKey(ctx context.Context, cl *cluster.Cluster) error {
	for _, n := range append(cl.LockNodes(), cl.Inventory()) {
		if err := n.(sentinel.Node).Admin().Set(ctx, "lock", "held", time.Minute).Err(); err != nil {
			return err
		}
	}
	return nil
}

func sqlRow(ctx context.Context, cl *cluster.Cluster) error {
	_, err := sqldb.Server(cl).Admin().ExecContext(ctx, sqldb.DialectOf(cl).Query(
		"INSERT INTO "+sqldb.LockTable+" (name, owner) VALUES ('lock', 'held')"))
	return err
}

func poolConfig(t cluster.Topology) cluster.Config {
	return cluster.Config{Topology: t, Backend: local.Local{}, Service: service.LockService(t)}
}

// TestPoolResets checks that a deployment given back after a run that
// spared its servers comes back reset, the lock gone, and that one given
// back after a run that struck a server is not reused.
func TestPoolResets(t *testing.T) {
	for _, d := range dirt {
		t.Run(string(d.topology), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			pool := runner.NewPool()
			var pids []int // of every cluster taken
			defer func() {
				if err := pool.Close(); err != nil {
					t.Error(err)
				}
				for _, pid := range pids { // nothing outlives the pool
					if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
						t.Errorf("server process %d still there after the pool closed (%v)", pid, err)
					}
				}
			}()
			cfg := poolConfig(d.topology)
			first, err := pool.Take(ctx, cfg)
			if err != nil {
				t.Skip(err) // the service is not installed
			}
			pids = append(pids, first.ServerPids()...)
			if err := d.leave(ctx, first); err != nil {
				t.Fatal(err)
			}
			if state, err := first.LockState(ctx, "lock"); err != nil || !state.Held {
				t.Fatalf("the lock left is %s (%v): the test left nothing to reset", state, err)
			}
			pool.Put(first, true)
			again, err := pool.Take(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if again != first {
				t.Fatalf("a fresh cluster after a run that spared the servers (%+v)", pool.Stats())
			}
			if state, err := again.LockState(ctx, "lock"); err != nil || state.Held {
				t.Errorf("after the reset the lock is %s (%v), want free", state, err)
			}
			if err := again.Deployment().(cluster.Resetter).Clean(ctx); err != nil {
				t.Errorf("after the reset: %v", err)
			}
			pool.Put(again, false) // as after a run that killed a node
			fresh, err := pool.Take(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			pids = append(pids, fresh.ServerPids()...)
			if fresh == first {
				t.Error("a cluster reused after a run that struck a server")
			}
			pool.Put(fresh, true)
			if s := pool.Stats(); s.Started != 2 || s.Reused != 1 || s.Discarded != 1 {
				t.Errorf("stats %+v, want 2 started, 1 reused, 1 discarded", s)
			}
		})
	}
}

// TestPoolDiscardsUnclean checks that a deployment whose reset leaves a
// session holding a lock is closed, not handed out again.
func TestPoolDiscardsUnclean(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := runner.NewPool()
	defer pool.Close()
	cfg := poolConfig(cluster.MariaDBTopology)
	first, err := pool.Take(ctx, cfg)
	if err != nil {
		t.Skip(err)
	}
	// A session past every link, which no reset ends, holding a named lock.
	db, err := sql.Open(sqldb.Server(first).Driver(), sqldb.Server(first).DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "SELECT GET_LOCK('lock', 0)"); err != nil {
		t.Fatal(err)
	}
	pool.Put(first, true)
	again, err := pool.Take(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Put(again, true)
	if again == first {
		t.Error("a cluster reused with another session holding a named lock")
	}
}
