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
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/cluster/local/proc"
	"github.com/locklab/locklab/network"
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
		return "", fmt.Errorf("%w: run `make deps` (Debian/Ubuntu: apt-get install -y etcd-server; macOS: brew install etcd) or set ETCD", cluster.ErrNoEtcd)
	}
	return filepath.Abs(path)
}

// Cluster is n etcd processes on 127.0.0.1 that form one cluster, each
// with its own data directory under the run's directory.
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
		m := &Member{name: fmt.Sprintf("e%d", i+1), server: server}
		c.members = append(c.members, m)
		if m.clientPort, err = network.StablePort(); err != nil {
			return nil, fmt.Errorf("start etcd: %w", err)
		}
		if m.peerPort, err = network.StablePort(); err != nil {
			return nil, fmt.Errorf("start etcd: %w", err)
		}
		m.dir = filepath.Join(dir, m.name)
		if err := os.Mkdir(m.dir, 0o700); err != nil {
			return nil, fmt.Errorf("start etcd: %w", err)
		}
		peers = append(peers, fmt.Sprintf("%s=http://127.0.0.1:%d", m.name, m.peerPort))
	}
	// A token of this run's own, so that a member can never join a cluster
	// of another run that reused a port.
	token := fmt.Sprintf("locklab-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, m := range c.members {
		m.args = m.argsFor(strings.Join(peers, ","), token)
		if err := m.spawn(); err != nil {
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
			if p := m.proc.Load(); p == nil || p.Exited() {
				return "", fmt.Errorf("etcd member %s exited", m.name)
			}
		}
		if _, _, err := cluster.EtcdLeader(ctx, c); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
	if err == nil {
		return nil
	}
	var tails []string
	for _, m := range c.members {
		tails = append(tails, m.name+":\n"+proc.LogTail(m.logPath(), 0, logTailLines))
	}
	return fmt.Errorf("start etcd: %w; log tails:\n%s", err, strings.Join(tails, "\n"))
}

// Nodes are the members as cluster nodes.
func (c *Cluster) Nodes() []cluster.Node {
	var nodes []cluster.Node
	for _, m := range c.members {
		nodes = append(nodes, m)
	}
	return nodes
}

// Endpoints are the members' client addresses.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.Addr())
	}
	return eps
}

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

// Member is one etcd process of an Cluster: a cluster.Node whose
// Admin is nil. Its methods may be called from several goroutines.
type Member struct {
	name       string
	dir        string // the member's data directory and its log
	server     string
	clientPort int
	peerPort   int
	args       []string

	mu      sync.Mutex // serializes the lifecycle
	proc    atomic.Pointer[proc.Process]
	stopped bool
}

// argsFor are the member's flags in a cluster of peers.
func (m *Member) argsFor(peers, token string) []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", m.clientPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", m.peerPort)
	return []string{
		"--name", m.name,
		"--data-dir", filepath.Join(m.dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", peers, "--initial-cluster-state", "new", "--initial-cluster-token", token,
		"--heartbeat-interval", strconv.Itoa(etcdHeartbeatMS), "--election-timeout", strconv.Itoa(etcdElectionMS),
		"--logger", "zap", "--log-outputs", "stderr",
	}
}

func (m *Member) logPath() string { return filepath.Join(m.dir, etcdLogName) }

// spawn starts the member's process; it does not wait for it to serve,
// since a member alone cannot: it waits for a quorum of its peers.
func (m *Member) spawn() error {
	logFile, err := os.OpenFile(m.logPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("start etcd member %s: %w", m.name, err)
	}
	defer logFile.Close() // the child has its own copy
	// Not exec.CommandContext: the member must outlive the start's ctx.
	cmd := exec.Command(m.server, m.args...)
	cmd.Dir = m.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	proc.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start etcd member %s: %w", m.name, err)
	}
	p := proc.Watch(cmd)
	m.proc.Store(p)
	return nil
}

// Name is the member's name ("e1").
func (m *Member) Name() string { return m.name }

// Addr is the member's client address; it stays the same across restarts.
func (m *Member) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(m.clientPort))
}

// Admin is nil: an etcd member speaks no Redis (the cluster's Admin is
// its client).
func (m *Member) Admin() *redis.Client { return nil }

// Running reports whether the member's process is alive; a paused one is.
func (m *Member) Running() bool {
	p := m.proc.Load()
	return p != nil && !p.Exited()
}

// Kill sends SIGKILL and waits for the process to exit.
func (m *Member) Kill() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kill()
}

func (m *Member) kill() error {
	if err := m.proc.Load().Kill(); err != nil {
		return fmt.Errorf("kill etcd member %s: %w", m.name, err)
	}
	return nil
}

// Restart starts the member again on the same ports with the data it had
// on disk, and returns once it serves. Without its data it would need to
// be removed from the cluster and added again as a new member, which no
// fault does yet: keepData false is an error.
func (m *Member) Restart(ctx context.Context, keepData bool) error {
	if !keepData {
		return fmt.Errorf("restart etcd member %s: a restart without data is not supported (it needs a member remove and add)", m.name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return fmt.Errorf("restart etcd member %s: stopped", m.name)
	}
	if err := m.kill(); err != nil {
		return err
	}
	if err := m.spawn(); err != nil {
		return err
	}
	// Ready when it answers a status request with a leader: it has
	// rejoined the cluster.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.Addr()}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("restart etcd member %s: %w", m.name, err)
	}
	defer cli.Close()
	return backendkit.PollUntil(ctx, "etcd member "+m.name+" rejoins", func(ctx context.Context) (string, error) {
		if p := m.proc.Load(); p.Exited() {
			return "", fmt.Errorf("exited; log tail:\n%s", proc.LogTail(m.logPath(), 0, logTailLines))
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

// Pause stops the member with SIGSTOP.
func (m *Member) Pause() error { return m.signal("pause", syscall.SIGSTOP) }

// Resume continues a paused member with SIGCONT.
func (m *Member) Resume() error { return m.signal("resume", syscall.SIGCONT) }

func (m *Member) signal(verb string, sig syscall.Signal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.proc.Load().Signal(sig); err != nil {
		return fmt.Errorf("%s etcd member %s: %w", verb, m.name, err)
	}
	return nil
}

// Stop kills the member, gives its ports back and removes its directory;
// it may be called twice.
func (m *Member) Stop() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil
	}
	if err := m.kill(); err != nil {
		return err
	}
	m.stopped = true
	for _, port := range []int{m.clientPort, m.peerPort} {
		if port != 0 {
			network.ReleasePort(port)
		}
	}
	if m.dir != "" {
		if err := os.RemoveAll(m.dir); err != nil {
			return fmt.Errorf("stop etcd member %s: %w", m.name, err)
		}
	}
	return nil
}

// logTailLines is how many lines of a server's log an error quotes.
const logTailLines = 10
