package docker

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	dc "github.com/ory/dockertest/v3/docker"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/internal/backendkit"
)

// dockerNode is one container of a run: a redis-server, a Sentinel, MariaDB,
// PostgreSQL, an etcd member, a ZooKeeper server, or the server of a lock
// service started from its cluster.ServerSpec (StartServer), whose Admin is
// nil.
// Its methods may be called from several goroutines.
type dockerNode struct {
	run   *dockerRun
	name  string
	image string
	port  int      // the server's port inside the container
	cmd   []string // the image's arguments
	// files are written into the container before it starts, by path: a
	// Sentinel's config file, a ZooKeeper server's zoo.cfg and myid.
	files map[string]string
	env   []string // the container's environment
	// clock is the libfaketime timestamp file of a ZooKeeper server's JVM,
	// "" for a node whose clock cannot jump; clockAhead its offset.
	clock      string
	clockAhead time.Duration
	noVolume   bool // MariaDB keeps its data in the container
	// supervised: the server runs under locklab-init, which kills and
	// restarts it in place (Redis, not MariaDB, which no fault touches).
	supervised bool
	// ready awaits the server after a restart; nil: its Redis admin
	// client answers.
	ready func(ctx context.Context) error
	// noWipe, when set, is why a restart without the node's data is
	// refused.
	noWipe error
	ip     netip.Addr
	hosts  []string
	pairs  []*dockerPair
	admin  *redis.Client

	// pid is the container's first process as this machine's /proc numbers
	// it, or 0: read without mu, so that the lag meter never waits behind
	// a restart.
	pid atomic.Int64

	mu        sync.Mutex // serializes the lifecycle
	container string     // the container's ID
	volume    string
	addr      string // 127.0.0.1:published port, the same across restarts
	hostPort  int
	initPort  int // locklab-init's control port, published
	running   bool
	paused    bool
	stopped   bool
}

// Name returns the node's name.
func (n *dockerNode) Name() string { return n.name }

// Addr returns 127.0.0.1 and the published port; it stays the same across restarts.
func (n *dockerNode) Addr() string { return n.addr }

// Admin returns a direct client through the published port.
func (n *dockerNode) Admin() *redis.Client { return n.admin }

// Pid is the container's first process as this machine numbers it
// (cluster.ServerProcess), or 0.
func (n *dockerNode) Pid() int { return int(n.pid.Load()) }

// Running reports whether the container runs; a paused one does.
func (n *dockerNode) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.running
}

// create makes the node's volume and container, joins its pair networks
// (those no fault holds it off), writes a Sentinel's config file and starts
// it. A published port that someone took in the meantime is retried with
// another. Called with n.mu held, or before n is shared.
func (n *dockerNode) create(ctx context.Context) error {
	client := n.run.pool.Client
	if !n.noVolume && n.volume == "" {
		n.volume = fmt.Sprintf("locklab-%s-%s", n.run.id, n.name)
		if _, err := client.CreateVolume(dc.CreateVolumeOptions{Name: n.volume, Labels: n.run.labels, Context: ctx}); err != nil {
			n.volume = ""
			return fmt.Errorf("make volume: %w", err)
		}
	}
	for trial := 1; ; trial++ {
		if n.hostPort == 0 {
			port, err := backendkit.FreeLoopbackPort()
			if err != nil {
				return err
			}
			n.hostPort = port
		}
		if n.supervised && n.initPort == 0 {
			port, err := backendkit.FreeLoopbackPort()
			if err != nil {
				return err
			}
			n.initPort = port
		}
		err := n.createContainer(ctx)
		if err == nil {
			n.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(n.hostPort))
			n.running = true
			return nil
		}
		n.removeContainer()
		// Only a port found free before the container had it may move: once
		// the node answered on it, its address stays.
		if n.addr == "" && portTaken(err) && trial < dockerStartTrials {
			n.hostPort, n.initPort = 0, 0
			continue
		}
		return err
	}
}

// portTaken reports whether err is a published port someone took since it
// was found free: a process of this machine ("address already in use") or
// another container, such as a node of the same run started at the same
// moment ("port is already allocated").
func portTaken(err error) bool {
	return strings.Contains(err.Error(), "address already in use") || strings.Contains(err.Error(), "port is already allocated")
}

// createContainer makes and starts the container.
func (n *dockerNode) createContainer(ctx context.Context) error {
	client := n.run.pool.Client
	port := dc.Port(strconv.Itoa(n.port) + "/tcp")
	host := &dc.HostConfig{
		PortBindings: map[dc.Port][]dc.PortBinding{port: {{HostIP: "127.0.0.1", HostPort: strconv.Itoa(n.hostPort)}}},
		ExtraHosts:   n.hosts,
	}
	exposed := map[dc.Port]struct{}{port: {}}
	if n.supervised {
		ctl := dc.Port(strconv.Itoa(dockerInitPort) + "/tcp")
		host.PortBindings[ctl] = []dc.PortBinding{{HostIP: "127.0.0.1", HostPort: strconv.Itoa(n.initPort)}}
		exposed[ctl] = struct{}{}
	}
	if n.volume != "" {
		host.Binds = []string{n.volume + ":" + dockerDataDir}
	}
	c, err := client.CreateContainer(dc.CreateContainerOptions{
		Name: fmt.Sprintf("locklab-%s-%s", n.run.id, n.name),
		Config: &dc.Config{
			Image: n.image, Cmd: n.cmd, Env: n.env, Hostname: n.name, Labels: n.run.labels,
			ExposedPorts: exposed,
		},
		HostConfig: host,
		NetworkingConfig: &dc.NetworkingConfig{EndpointsConfig: map[string]*dc.EndpointConfig{
			n.run.network.Network.ID: {IPAMConfig: &dc.EndpointIPAMConfig{IPv4Address: n.ip.String()}},
		}},
		Context: ctx,
	})
	if err != nil {
		return fmt.Errorf("create container: %w", err)
	}
	n.container = c.ID
	for _, p := range n.pairs {
		n.run.mu.Lock()
		cut := p.cuts[n.name] > 0
		n.run.mu.Unlock()
		if cut {
			continue
		}
		if err := n.connect(ctx, p); err != nil {
			return err
		}
	}
	for _, path := range slices.Sorted(maps.Keys(n.files)) {
		if err := n.upload(ctx, path, n.files[path]); err != nil {
			return err
		}
	}
	if err := client.StartContainer(c.ID, nil); err != nil {
		return fmt.Errorf("start container: %w", err)
	}
	// locklab-init (or the server) stays the first process across the
	// server's restarts, so its pid is read once.
	if started, err := client.InspectContainerWithContext(c.ID, ctx); err == nil && ownContainer(started.State.Pid, c.ID) {
		n.pid.Store(int64(started.State.Pid))
	}
	return nil
}

// ownContainer reports whether pid, as the daemon numbers it, is a process
// of container id as this process sees it: not so where locklab runs in a
// container of its own, beside the daemon's.
func ownContainer(pid int, id string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return pid > 0 && err == nil && strings.Contains(string(b), id)
}

// connect joins the container to pair network p at its fixed address there.
func (n *dockerNode) connect(ctx context.Context, p *dockerPair) error {
	err := n.run.pool.Client.ConnectNetwork(p.id, dc.NetworkConnectionOptions{
		Container: n.container, Context: ctx,
		EndpointConfig: &dc.EndpointConfig{IPAMConfig: &dc.EndpointIPAMConfig{IPv4Address: p.addrOf(n.name).String()}},
	})
	if err != nil {
		return fmt.Errorf("connect to the replication network of %s and %s: %w", p.names[0], p.names[1], err)
	}
	return nil
}

// setPair connects the node to pair network p or disconnects it. Faults count:
// the node joins again when the last one ends.
func (n *dockerNode) setPair(ctx context.Context, p *dockerPair, on bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.run.mu.Lock()
	before := p.cuts[n.name]
	if on {
		p.cuts[n.name]--
	} else {
		p.cuts[n.name]++
	}
	after := p.cuts[n.name]
	n.run.mu.Unlock()
	if n.stopped || (before > 0) == (after > 0) {
		return nil
	}
	var err error
	if on {
		err = n.connect(ctx, p)
	} else {
		err = n.run.pool.Client.DisconnectNetwork(p.id, dc.NetworkConnectionOptions{Container: n.container, Force: true})
	}
	if err != nil {
		n.run.mu.Lock()
		p.cuts[n.name] = before
		n.run.mu.Unlock()
	}
	return err
}

// upload writes a file into the container.
func (n *dockerNode) upload(ctx context.Context, path, content string) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := tw.WriteHeader(&tar.Header{Name: filepath.Base(path), Mode: 0o644, Size: int64(len(content)), ModTime: time.Now()})
	if err == nil {
		_, err = tw.Write([]byte(content))
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = n.run.pool.Client.UploadToContainer(n.container, dc.UploadToContainerOptions{
			InputStream: &buf, Path: filepath.Dir(path), Context: ctx})
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// control sends one command to locklab-init and returns its answer.
func (n *dockerNode) control(ctx context.Context, cmd string) error {
	ctx, cancel := context.WithTimeout(ctx, dockerStopTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(n.initPort)))
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	if _, err := io.WriteString(conn, cmd+"\n"); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	answer, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return fmt.Errorf("%s: no answer from locklab-init: %w", cmd, err)
	}
	if answer = strings.TrimSpace(answer); answer != "ok" {
		return fmt.Errorf("%s: locklab-init: %s", cmd, answer)
	}
	return nil
}

// Kill sends SIGKILL to the server and waits until it is gone: a real crash.
// locklab-init sends it, inside the container, which keeps its network, its
// ports and its volume, as a host does when a process crashes. Killing a
// node that is not running does nothing.
func (n *dockerNode) Kill() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.kill()
}

// kill is Kill with n.mu held.
func (n *dockerNode) kill() error {
	if !n.running {
		return nil
	}
	client := n.run.pool.Client
	if n.paused {
		// A frozen cgroup holds the signal, and locklab-init, which sends
		// it, is frozen too: thaw first. The server may run for the few
		// milliseconds in between, where a local SIGKILL strikes at once.
		if err := client.UnpauseContainer(n.container); err != nil {
			return fmt.Errorf("kill node %s: %w", n.name, err)
		}
		n.paused = false
	}
	if !n.supervised {
		return fmt.Errorf("kill node %s: it runs no locklab-init", n.name)
	}
	if err := n.control(context.Background(), "kill"); err != nil {
		return fmt.Errorf("kill node %s: %w", n.name, err)
	}
	n.running = false
	return nil
}

// Restart starts the node again at the same address, killing it first if it
// still runs. With keepData false its volume is emptied first, as if its
// disk were lost; a Sentinel then gets its config file afresh.
func (n *dockerNode) Restart(ctx context.Context, keepData bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return fmt.Errorf("restart node %s: node is stopped", n.name)
	}
	if !keepData && n.noWipe != nil {
		return fmt.Errorf("restart node %s: %w", n.name, n.noWipe)
	}
	if err := n.kill(); err != nil {
		return err
	}
	if !keepData {
		if err := n.control(ctx, "wipe"); err != nil {
			return fmt.Errorf("restart node %s: %w", n.name, err)
		}
	}
	if err := n.control(ctx, "start"); err != nil {
		return fmt.Errorf("restart node %s: %w", n.name, err)
	}
	n.running = true
	ready := n.ready
	if ready == nil {
		ready = func(ctx context.Context) error { return backendkit.WaitAdmin(ctx, n.admin) }
	}
	if err := ready(ctx); err != nil {
		return fmt.Errorf("restart node %s: %w; log tail:\n%s", n.name, err, n.logTail())
	}
	return nil
}

// JumpClock moves the wall clock of a ZooKeeper server's JVM forward by d,
// for good: the image preloads libfaketime, which reads the offset from a
// file at every reading of the wall clock, the monotonic clock untouched;
// the file is written in one piece into the container. Other nodes, and an
// image without libfaketime, say they cannot.
func (n *dockerNode) JumpClock(d time.Duration) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.clock == "" {
		return fmt.Errorf("jump the clock of node %s: only a ZooKeeper server's clock can jump (libfaketime in its JVM)", n.name)
	}
	if n.stopped || n.container == "" {
		return fmt.Errorf("jump the clock of node %s: node is stopped", n.name)
	}
	n.clockAhead += d
	if err := n.upload(context.Background(), n.clock, faketimeOffset(n.clockAhead)); err != nil {
		return fmt.Errorf("jump the clock of node %s: %w", n.name, err)
	}
	return nil
}

// faketimeOffset is libfaketime's timestamp file for a clock d ahead.
func faketimeOffset(d time.Duration) string { return fmt.Sprintf("%+.6f\n", d.Seconds()) }

// Pause freezes the container (docker pause, the cgroup freezer): it keeps
// its connections and answers nothing until Resume.
func (n *dockerNode) Pause() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.running {
		return fmt.Errorf("pause node %s: not running", n.name)
	}
	if err := n.run.pool.Client.PauseContainer(n.container); err != nil {
		return fmt.Errorf("pause node %s: %w", n.name, err)
	}
	n.paused = true
	return nil
}

// Resume thaws a paused container.
func (n *dockerNode) Resume() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.running {
		return fmt.Errorf("resume node %s: not running", n.name)
	}
	if err := n.run.pool.Client.UnpauseContainer(n.container); err != nil {
		return fmt.Errorf("resume node %s: %w", n.name, err)
	}
	n.paused = false
	return nil
}

// Stop removes the container and its volume and closes Admin. It can be
// called more than once, after Kill, and on a paused node.
func (n *dockerNode) Stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return nil
	}
	n.stopped = true
	n.running = false
	if n.admin != nil {
		_ = n.admin.Close() // the server is gone; errors from closing connections tell nothing
	}
	err := n.removeContainer()
	if n.volume != "" {
		if verr := n.run.pool.Client.RemoveVolumeWithOptions(dc.RemoveVolumeOptions{Name: n.volume, Force: true}); verr != nil {
			err = errors.Join(err, verr)
		}
		n.volume = ""
	}
	n.run.forget(n)
	if err != nil {
		return fmt.Errorf("stop node %s: %w", n.name, err)
	}
	return nil
}

// removeContainer removes the container, running or not.
func (n *dockerNode) removeContainer() error {
	if n.container == "" {
		return nil
	}
	err := n.run.pool.Client.RemoveContainer(dc.RemoveContainerOptions{ID: n.container, Force: true, RemoveVolumes: true})
	var gone *dc.NoSuchContainer
	if errors.As(err, &gone) {
		err = nil
	}
	if err == nil {
		n.container = ""
		n.pid.Store(0)
		n.running, n.paused = false, false
	}
	return err
}

// logTail returns the last lines the container wrote.
func (n *dockerNode) logTail() string {
	if n.container == "" {
		return "(no container)"
	}
	var out bytes.Buffer
	err := n.run.pool.Client.Logs(dc.LogsOptions{Container: n.container, OutputStream: &out, ErrorStream: &out,
		Stdout: true, Stderr: true, Tail: strconv.Itoa(dockerLogTailLines)})
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	return strings.TrimRight(out.String(), "\n")
}

// dockerMariaDB is MariaDB in a container of a docker run.
type dockerMariaDB struct {
	node *dockerNode
	cfg  *mysql.Config
	db   *sql.DB
}

// DSN is root over TCP to the published port.
func (m *dockerMariaDB) DSN() string { return m.cfg.FormatDSN() }

// Driver is "mysql": DSN is github.com/go-sql-driver/mysql's.
func (m *dockerMariaDB) Driver() string { return "mysql" }

// SetupInventory creates the inventory row, as the local MariaDB does.
func (m *dockerMariaDB) SetupInventory(ctx context.Context, stock int64) error {
	return backendkit.SetupInventory(ctx, m.db, stock)
}

// Admin is a pool as root, for the harness's own use.
func (m *dockerMariaDB) Admin() *sql.DB { return m.db }

// Pid is the container's first process (cluster.ServerProcess).
func (m *dockerMariaDB) Pid() int { return m.node.Pid() }

// Stock reads the committed stock, as the local MariaDB does.
func (m *dockerMariaDB) Stock(ctx context.Context) (int64, error) {
	return backendkit.Stock(ctx, m.db)
}

// Stop removes the container and closes the pool; it may be called twice.
func (m *dockerMariaDB) Stop() error {
	err := m.node.Stop()
	_ = m.db.Close() // after the container: a query blocked on a row lock would hold Close
	return err
}
