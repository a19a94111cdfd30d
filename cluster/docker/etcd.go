package docker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/service/etcd/members"
)

const (
	dockerEtcdRepo       = "locklab/etcd"
	dockerEtcdClientPort = 2379
	dockerEtcdPeerPort   = 2380
	// The Raft timing of the local backend's members (cluster/local), for
	// the same reasons: a leader replaced within a second, leases of a
	// second, and no elections for nothing on a loaded machine.
	dockerEtcdHeartbeatMS = 50
	dockerEtcdElectionMS  = 500
	dockerEtcdStartCap    = 30 * time.Second
)

// StartEtcd starts an etcd cluster of n members, each in a container of
// its own under locklab-init, which kills and restarts it in place as it
// does redis-server. The members reach each other by name on the run's
// network; clients reach each through its published port. Without the
// image it says so in one line wrapping members.ErrNoEtcd, so that the run
// is skipped.
func (r *dockerRun) StartEtcd(ctx context.Context, _ string, n int) (_ members.Set, err error) {
	image, err := r.docker.image(r.pool, r.docker.EtcdImage, dockerEtcdRepo)
	if err != nil {
		return nil, fmt.Errorf("%w on the docker backend: %v", members.ErrNoEtcd, err)
	}
	ctx, cancel := context.WithTimeout(ctx, dockerEtcdStartCap)
	defer cancel()
	set := &dockerEtcd{}
	defer func() {
		if err != nil {
			err = errors.Join(err, set.Stop())
		}
	}()
	var names, peers []string
	for i := range n {
		name := fmt.Sprintf("e%d", i+1)
		names = append(names, name)
		peers = append(peers, fmt.Sprintf("%s=http://%s:%d", name, name, dockerEtcdPeerPort))
	}
	token := "locklab-" + r.id // a member never joins another run's cluster
	set.members, err = startAll(n, func(i int) (*dockerNode, error) {
		return r.etcdMember(ctx, names[i], image, strings.Join(peers, ","), token)
	})
	if err != nil {
		return nil, err
	}
	set.admin, err = clientv3.New(clientv3.Config{Endpoints: set.Endpoints(), DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("start etcd: admin client: %w", err)
	}
	for _, m := range set.members {
		m.ready = func(ctx context.Context) error { return set.awaitMember(ctx, m.Addr()) }
		m.noWipe = errors.New("a restart of an etcd member without its data is not supported (it needs a member remove and add)")
	}
	if err := set.awaitLeader(ctx); err != nil {
		return nil, fmt.Errorf("start etcd: %w; log tails:\n%s", err, logTails(set.members))
	}
	return set, nil
}

// etcdMember creates the container of member name; it does not wait for
// it to serve, since a member alone cannot: it waits for a quorum.
func (r *dockerRun) etcdMember(ctx context.Context, name, image, peers, token string) (*dockerNode, error) {
	client := fmt.Sprintf("http://0.0.0.0:%d", dockerEtcdClientPort)
	peer := fmt.Sprintf("http://%s:%d", name, dockerEtcdPeerPort)
	m := &dockerNode{run: r, name: name, image: image, port: dockerEtcdClientPort, supervised: true}
	m.cmd = []string{"-ctl", ":" + strconv.Itoa(dockerInitPort), "-data", dockerDataDir, "--",
		"/usr/bin/etcd", "--name", name, "--data-dir", dockerDataDir + "/member",
		"--listen-client-urls", client, "--advertise-client-urls", fmt.Sprintf("http://%s:%d", name, dockerEtcdClientPort),
		"--listen-peer-urls", fmt.Sprintf("http://0.0.0.0:%d", dockerEtcdPeerPort), "--initial-advertise-peer-urls", peer,
		"--initial-cluster", peers, "--initial-cluster-state", "new", "--initial-cluster-token", token,
		"--heartbeat-interval", strconv.Itoa(dockerEtcdHeartbeatMS), "--election-timeout", strconv.Itoa(dockerEtcdElectionMS),
		"--logger", "zap", "--log-outputs", "stderr"}
	if err := r.createNode(ctx, m); err != nil {
		return nil, fmt.Errorf("start etcd member %s: %w", name, err)
	}
	return m, nil
}

// dockerEtcd is the etcd cluster of a docker run.
type dockerEtcd struct {
	members []*dockerNode
	admin   *clientv3.Client
	once    sync.Once
	err     error
}

// awaitLeader polls until a majority of the members names one leader.
func (s *dockerEtcd) awaitLeader(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, dockerEtcdStartCap)
	defer cancel()
	return backendkit.PollUntil(ctx, "etcd leader", func(ctx context.Context) (string, error) {
		if _, _, err := members.Leader(ctx, s); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
}

// awaitMember polls until the member at ep answers a status request with
// a leader: it has rejoined the cluster.
func (s *dockerEtcd) awaitMember(ctx context.Context, ep string) error {
	ctx, cancel := context.WithTimeout(ctx, dockerEtcdStartCap)
	defer cancel()
	return backendkit.PollUntil(ctx, "etcd member at "+ep+" rejoins", func(ctx context.Context) (string, error) {
		sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		st, err := s.admin.Status(sctx, ep)
		if err != nil {
			return err.Error(), nil
		}
		if st.Leader == 0 {
			return "no leader yet", nil
		}
		return "", nil
	})
}

// Nodes are the members, each a cluster.Node whose Admin is nil.
func (s *dockerEtcd) Nodes() []cluster.Node { return asServers(s.members...) }

// Endpoints are the members' published client ports.
func (s *dockerEtcd) Endpoints() []string { return cluster.Addrs(s.members) }

// Admin is a client of every member, past any link.
func (s *dockerEtcd) Admin() *clientv3.Client { return s.admin }

// Stop removes every member's container and closes Admin.
func (s *dockerEtcd) Stop() error {
	s.once.Do(func() {
		var errs []error
		for _, m := range s.members {
			errs = append(errs, m.Stop())
		}
		if s.admin != nil {
			_ = s.admin.Close() // the servers are gone: closing tells nothing
		}
		s.err = errors.Join(errs...)
	})
	return s.err
}
