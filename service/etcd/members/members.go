// Package members is what a backend implements to run etcd for
// service/etcd: the Set of members it started and the Starter that starts
// them, with the leader's reading that both sides need (the backend waits
// for a leader; the service's deployment names it).
//
// It is a package of its own, not part of service/etcd, because the
// backends import it: service/etcd dials clients and so imports harness,
// whose own tests start clusters on the local backend, which would then
// import harness back.
package members

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
)

// ErrNoEtcd means a run on the etcd topology could not start etcd: no
// binary (cluster/local/etcd: Path), or a backend without etcd. A suite
// skips such a run, as one that lacks redis-server.
var ErrNoEtcd = errors.New("etcd not found")

// Set is a running etcd cluster, however its backend runs it.
type Set interface {
	// Nodes are its members, in the order of Endpoints; each a Node whose
	// Admin is nil (it speaks no Redis).
	Nodes() []cluster.Node
	// Endpoints are the members' client addresses (host:port), which stay
	// the same across restarts.
	Endpoints() []string
	// Admin is a client of every member, past any link, for the harness's
	// own use (setup, the leader, the lock's state).
	Admin() *clientv3.Client
	// Stop stops every member and removes their files; it may be called
	// twice.
	Stop() error
}

// Starter is a cluster.RunSession that can start an etcd cluster (both
// backends can). It is an interface of its own, not a method of
// RunSession, so that a backend without etcd needs no change: its runs on
// the etcd topology fail at start, naming what is missing.
type Starter interface {
	// StartEtcd starts an etcd cluster of n members whose files live under
	// dir and returns once it has a leader.
	StartEtcd(ctx context.Context, dir string, n int) (Set, error)
}

// Leader is set's leader now, as a majority of its members say, and its
// index in set.Nodes().
func Leader(ctx context.Context, set Set) (cluster.Node, int, error) {
	votes := map[uint64]int{}
	ids := map[uint64]int{} // member ID → index
	var errs []string
	for i, ep := range set.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := set.Admin().Status(sctx, ep)
		cancel()
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		ids[st.Header.MemberId] = i
		if st.Leader != 0 {
			votes[st.Leader]++
		}
	}
	for leader, n := range votes {
		if i, ok := ids[leader]; ok && n > len(set.Endpoints())/2 {
			return set.Nodes()[i], i, nil
		}
	}
	return nil, -1, fmt.Errorf("etcd has no leader a majority agrees on (votes %v; errors: %s)", votes, strings.Join(errs, "; "))
}
