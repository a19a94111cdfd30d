package local

import (
	"context"

	"github.com/locklab/locklab/cluster/local/etcd"
	"github.com/locklab/locklab/cluster/local/zookeeper"
	"github.com/locklab/locklab/service/etcd/members"
	"github.com/locklab/locklab/service/zookeeper/ensemble"
)

// ErrNoEtcd means no etcd binary was found (etcd.Path), so callers can
// tell a missing dependency from a failed run; it is members.ErrNoEtcd
// (service/etcd), which a backend without etcd wraps too.
var ErrNoEtcd = members.ErrNoEtcd

// ErrNoZooKeeper means no Java or no ZooKeeper jar was found
// (zookeeper.Path); it is ensemble.ErrNoZooKeeper (service/zookeeper),
// which a backend without ZooKeeper wraps too.
var ErrNoZooKeeper = ensemble.ErrNoZooKeeper

// StartEtcd starts an etcd cluster of n members, each a process of this
// machine: the local backend is a members.Starter of service/etcd.
func (session) StartEtcd(ctx context.Context, dir string, n int) (members.Set, error) {
	return etcd.Start(ctx, dir, n)
}

// StartZooKeeper starts a ZooKeeper ensemble of n servers, each a JVM of
// this machine: the local backend is an ensemble.Starter of
// service/zookeeper.
func (session) StartZooKeeper(ctx context.Context, dir string, n int) (ensemble.Set, error) {
	return zookeeper.Start(ctx, dir, n)
}
