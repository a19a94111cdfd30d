// Package etcd runs an etcd cluster as local processes: one etcd per
// member on free loopback ports, each with its own data directory under
// the run's directory.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/cluster/local/proc"
	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/service/etcd/members"
)

const (
	etcdLogName = "etcd.log"
	// etcdStartCap bounds the start of a cluster, from nothing to a leader.
	etcdStartCap = 30 * time.Second
	// The Raft timing of every member. Ten times faster than etcd's
	// defaults, so that a killed leader is replaced within a second and a
	// lease can be as short as one second (etcd's shortest lease is 1.5
	// election timeouts, rounded up to whole seconds); not faster, so that a
	// loaded machine (two cores shared by three test runs) does not call
	// elections for nothing.
	etcdHeartbeatMS = 50
	etcdElectionMS  = 500
)

// Path returns the etcd binary: $ETCD when set, else the one on PATH.
// The error says how to install it.
func Path() (string, error) {
	name := "etcd"
	if p := os.Getenv("ETCD"); p != "" {
		name = p
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: run `make deps` (Debian/Ubuntu: apt-get install -y etcd-server; macOS: brew install etcd) or set ETCD", members.ErrNoEtcd)
	}
	return filepath.Abs(path)
}

// Cluster is n etcd processes on 127.0.0.1 that form one cluster, each
// with its own data directory under the run's directory: service/etcd's
// members.Set.
type Cluster struct {
	members []*Member
	admin   *clientv3.Client
	once    sync.Once
	err     error
}

// Start starts n etcd members at once on free loopback ports (a client
// and a peer port each) and returns once the cluster has a leader that a
// majority agrees on. On failure nothing is left running or on disk.
func Start(ctx context.Context, dir string, n int) (_ *Cluster, err error) {
	server, err := Path()
	if err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, etcdStartCap)
	defer cancel()
	c := &Cluster{}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	// Every member must know every peer URL before any starts, so all
	// ports are taken first; StablePort keeps them out of the ephemeral
	// range, where a restart could find its port taken by an outgoing
	// connection.
	var peers []string
	for i := range n {
		name := fmt.Sprintf("e%d", i+1)
		m := &Member{Member: proc.NewMember("etcd member", name, filepath.Join(dir, name), etcdLogName), server: server}
		c.members = append(c.members, m)
		for _, p := range []*int{&m.clientPort, &m.peerPort} {
			if *p, err = network.StablePort(); err != nil {
				return nil, fmt.Errorf("start etcd: %w", err)
			}
			m.HoldPort(*p)
		}
		if err := os.Mkdir(m.Dir(), 0o700); err != nil {
			return nil, fmt.Errorf("start etcd: %w", err)
		}
		peers = append(peers, fmt.Sprintf("%s=http://127.0.0.1:%d", name, m.peerPort))
	}
	// A token of this run's own, so that a member can never join a cluster
	// of another run that reused a port.
	token := fmt.Sprintf("locklab-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, m := range c.members {
		// Not waited for: a member alone cannot serve, it waits for a quorum
		// of its peers.
		m.args = m.argsFor(strings.Join(peers, ","), token)
		if _, err := m.Spawn(nil, m.server, m.args...); err != nil {
			return nil, err
		}
	}
	c.admin, err = clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("start etcd: admin client: %w", err)
	}
	if err := c.waitLeader(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// waitLeader polls until a majority names one leader, or a member exits,
// or ctx ends; the error then carries the members' log tails.
func (c *Cluster) waitLeader(ctx context.Context) error {
	err := backendkit.PollUntil(ctx, "etcd leader", func(ctx context.Context) (string, error) {
		for _, m := range c.members {
			if !m.Running() {
				return "", fmt.Errorf("etcd member %s exited", m.Name())
			}
		}
		if _, _, err := members.Leader(ctx, c); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
	if err == nil {
		return nil
	}
	var tails []string
	for _, m := range c.members {
		tails = append(tails, m.Name()+":\n"+proc.LogTail(m.LogPath(), 0, logTailLines))
	}
	return fmt.Errorf("start etcd: %w; log tails:\n%s", err, strings.Join(tails, "\n"))
}

// Nodes are the members as cluster nodes.
func (c *Cluster) Nodes() []cluster.Node { return cluster.NodesOf(c.members) }

// Endpoints are the members' client addresses.
func (c *Cluster) Endpoints() []string { return cluster.Addrs(c.members) }

// Admin is a client of every member, past any link.
func (c *Cluster) Admin() *clientv3.Client { return c.admin }

// Stop kills every member, closes Admin and removes the members' files.
func (c *Cluster) Stop() error {
	c.once.Do(func() {
		var errs []error
		for _, m := range c.members {
			errs = append(errs, m.Stop())
		}
		if c.admin != nil {
			_ = c.admin.Close() // the servers are gone: closing tells nothing
		}
		c.err = errors.Join(errs...)
	})
	return c.err
}

// Member is one etcd process of a Cluster: a cluster.Node (the Cluster's
// Admin is its client). Its methods may be called from several goroutines.
type Member struct {
	// Its directory holds the member's data and its log.
	*proc.Member
	server     string
	clientPort int
	peerPort   int
	args       []string // its flags, the same at every start
}

// argsFor are the member's flags in a cluster of peers.
func (m *Member) argsFor(peers, token string) []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", m.clientPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", m.peerPort)
	return []string{
		"--name", m.Name(),
		"--data-dir", filepath.Join(m.Dir(), "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", peers, "--initial-cluster-state", "new", "--initial-cluster-token", token,
		"--heartbeat-interval", strconv.Itoa(etcdHeartbeatMS), "--election-timeout", strconv.Itoa(etcdElectionMS),
		"--logger", "zap", "--log-outputs", "stderr",
	}
}

// Addr is the member's client address; it stays the same across restarts.
func (m *Member) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(m.clientPort))
}

// Restart starts the member again on the same ports with the data it had
// on disk, and returns once it serves. Without its data it would need to
// be removed from the cluster and added again as a new member, which no
// fault does yet: keepData false is an error.
func (m *Member) Restart(ctx context.Context, keepData bool) error {
	if !keepData {
		return fmt.Errorf("restart etcd member %s: a restart without data is not supported (it needs a member remove and add)", m.Name())
	}
	return m.Member.Restart(func() error {
		if _, err := m.Spawn(nil, m.server, m.args...); err != nil {
			return err
		}
		return m.awaitRejoin(ctx)
	})
}

// awaitRejoin polls until the member answers a status request with a
// leader: it has rejoined the cluster.
func (m *Member) awaitRejoin(ctx context.Context) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.Addr()}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("restart etcd member %s: %w", m.Name(), err)
	}
	defer cli.Close()
	return backendkit.PollUntil(ctx, "etcd member "+m.Name()+" rejoins", func(ctx context.Context) (string, error) {
		if m.Process().Exited() {
			return "", fmt.Errorf("exited; log tail:\n%s", proc.LogTail(m.LogPath(), 0, logTailLines))
		}
		sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		st, err := cli.Status(sctx, m.Addr())
		if err != nil {
			return err.Error(), nil
		}
		if st.Leader == 0 {
			return "no leader yet", nil
		}
		return "", nil
	})
}

// logTailLines is how many lines of a server's log an error quotes.
const logTailLines = 10
