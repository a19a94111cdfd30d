// Package docker is the cluster backend that runs every server of a run in a
// container of its own, with dockertest, on a Docker network made for the
// run: the same topologies and faults as local processes, on servers that
// share no host with the harness or each other. Its images are built offline
// from this machine's binaries by docker/build.sh (make docker).
package docker

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/network"
)

// The docker backend runs every server in a container of images that
// docker/build.sh builds from this machine's own binaries (`make docker`).
//
// Each run gets its own user-defined bridge network, with a subnet of its
// own picked in dockerSubnets so that every container has a fixed address
// on it: a killed container starts again at the same address, which the
// Sentinels, who resolved it once, keep dialling. Clients reach each server
// through the in-process toxiproxy at a port published on 127.0.0.1 only.
//
// In each Redis container, redis-server runs under locklab-init
// (docker/init), which crashes it with SIGKILL and starts it again in place
// when told to on a second published port: a kill and restart take
// milliseconds, as a local process's do, where docker kill and docker start
// take some 600 ms, longer than the catalogue's 300 ms leases. Data lives in
// a volume per node; a restart without data empties it. Pause is docker
// pause (the cgroup freezer).
//
// How one replica's replication is cut at the network. Sentinel makes every
// replica replicate from the very address it knows the master by, so all
// replicas of one master dial the same name, and one network cannot cut one
// replica alone. So names resolve per container: each container's /etc/hosts
// (images look there before DNS) maps every node's name to its address on the
// run network, except that in a data node of the replicated topology the name
// of each other data node maps to that node's address on a small internal
// network of their pair. The Sentinels monitor the data nodes by name
// (resolve-hostnames, announce-hostnames), hand out names, and reach them on
// the run network; replication flows on the pair networks. Cutting a
// replica's replication disconnects it from the pair network it shares with
// the master (`docker network disconnect`): its packets to the master go
// nowhere, as in a real partition, while the Sentinels and clients still
// reach it. The heal connects it again at the same address and resets the
// replica's replication connection, as a healed local link does, so that it
// catches up from the master's backlog at once rather than at TCP's next
// retransmission. Whichever node is master, before and after failovers, the
// pair networks cover every path.

// Labels on every container, network and volume of the docker backend.
const (
	dockerRunLabel   = "locklab.run"   // the run's ID
	dockerPIDLabel   = "locklab.pid"   // the pid of the process that owns the run
	dockerHostLabel  = "locklab.host"  // the host name of that process
	dockerStartLabel = "locklab.start" // that process's boot ID and start time, against pid reuse
)

const (
	dockerRedisRepo   = "locklab/redis"
	dockerMariaDBRepo = "locklab/mariadb"
	dockerRedisPort   = 6379
	dockerInitPort    = 7000 // locklab-init's control port (docker/init)
	// dockerRevision is what locklab adds to the images (docker/build.sh's
	// REVISION): an image of another revision lacks what this code needs.
	dockerRevision     = "2"
	dockerSentinelSeed = "/etc/locklab-sentinel.conf"
	dockerMariaDBPort  = 3306
	dockerDataDir      = "/data"
	dockerStartTrials  = 3
	dockerLogTailLines = 10 // the lines of a container's log an error quotes
	dockerSentinelConf = "sentinel.conf"
	dockerStopTimeout  = 10 * time.Second
	// The run networks' subnets are /24s of this range: the run network is
	// the first /26, the pair networks are /29s after it.
	dockerSubnets      = "10.213.0.0/16"
	dockerSubnetTrials = 8
	dockerPairBase     = 64
	dockerPairSize     = 8
	dockerMaxPairs     = (256 - dockerPairBase) / dockerPairSize
)

// dockerHosts are the names every container can resolve, with their fixed
// host part on the run network; others get one from dockerFirstFreeHost on.
var dockerHosts = map[string]int{
	"n1": 2, "n2": 3, "n3": 4, "n4": 5, "n5": 6,
	"inventory": 9, "s1": 11, "s2": 12, "s3": 13, "mariadb": 20,
}

const dockerFirstFreeHost = 32

// ErrNoDocker means the docker backend cannot be used here: no Docker daemon
// answers, or the images are not built. Its message names the fix.
var ErrNoDocker = errors.New("docker backend unavailable")

// Docker runs every server in a container, with dockertest. It starts nothing
// itself: each run gets its own RunSession from StartRun. The zero value uses
// DOCKER_HOST (or the local socket) and the newest locklab images.
type Docker struct {
	// Endpoint is the Docker daemon's address; "" means DOCKER_HOST or the local socket.
	Endpoint string
	// RedisImage and MariaDBImage name the images ("repo:tag"); "" means the
	// newest locklab/redis and locklab/mariadb that `make docker` built.
	RedisImage, MariaDBImage string
}

// Name is "docker".
func (Docker) Name() string { return "docker" }

// FaultNotes says how the docker backend's node and replication faults are done.
func (Docker) FaultNotes() map[cluster.Operation]string {
	return map[cluster.Operation]string{
		cluster.NodeKill: "docker backend: a node kill is SIGKILL of redis-server by its container's init, " +
			"which keeps the container's network and volume; the restart starts it again there",
		cluster.NodePause: "docker backend: a node pause is docker pause (the cgroup freezer), not SIGSTOP",
		cluster.ReplicationCut: "docker backend: a replication cut disconnects the replica from the network it shares with the master " +
			"(docker network disconnect); the replica learns of it only by timeout, and the heal resets its replication connection",
	}
}

// Ready reports, in one line naming the fix, whether a daemon answers and the
// images are there; mariaDB says whether the MariaDB image is needed too.
func (d Docker) Ready(ctx context.Context, mariaDB bool) error {
	pool, err := d.pool(ctx)
	if err != nil {
		return err
	}
	if _, err := d.image(pool, d.RedisImage, dockerRedisRepo); err != nil {
		return err
	}
	if mariaDB {
		if _, err := d.image(pool, d.MariaDBImage, dockerMariaDBRepo); err != nil {
			return err
		}
	}
	return nil
}

// pool connects to the daemon and checks that it answers.
func (d Docker) pool(ctx context.Context) (*dockertest.Pool, error) {
	pool, err := dockertest.NewPool(d.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("%w: %v (start Docker, or set DOCKER_HOST)", ErrNoDocker, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Client.PingWithContext(pctx); err != nil {
		return nil, fmt.Errorf("%w: no Docker daemon answers at %s (start Docker, or set DOCKER_HOST): %v",
			ErrNoDocker, pool.Client.Endpoint(), err)
	}
	return pool, nil
}

// image returns name when the daemon has it, else the newest tag of repo.
func (Docker) image(pool *dockertest.Pool, name, repo string) (string, error) {
	if name != "" {
		if _, err := pool.Client.InspectImage(name); err != nil {
			return "", fmt.Errorf("%w: no image %s: run `make docker`, or docker/build.sh where no redis-server is installed (%v)", ErrNoDocker, name, err)
		}
		return name, nil
	}
	images, err := pool.Client.ListImages(dc.ListImagesOptions{Filters: map[string][]string{
		"reference": {repo}, "label": {"locklab.revision=" + dockerRevision}}})
	if err != nil {
		return "", fmt.Errorf("%w: list images: %v", ErrNoDocker, err)
	}
	var newest dc.APIImages
	for _, im := range images {
		if len(im.RepoTags) > 0 && im.Created >= newest.Created {
			newest = im
		}
	}
	if len(newest.RepoTags) == 0 {
		return "", fmt.Errorf("%w: no %s image of revision %s: run `make docker`, or docker/build.sh where no redis-server is installed", ErrNoDocker, repo, dockerRevision)
	}
	return newest.RepoTags[0], nil
}

// StartRun removes what killed runs left, checks the Redis image and makes
// the run's network.
func (d Docker) StartRun(ctx context.Context) (cluster.RunSession, error) {
	pool, err := d.pool(ctx)
	if err != nil {
		return nil, err
	}
	sweepDocker(pool.Client)
	redisImage, err := d.image(pool, d.RedisImage, dockerRedisRepo)
	if err != nil {
		return nil, err
	}
	id, err := randomHex(4)
	if err != nil {
		return nil, fmt.Errorf("docker backend: %w", err)
	}
	r := &dockerRun{
		docker: d, pool: pool, id: id, redisImage: redisImage,
		labels: ownerLabels(id), nodes: map[string]*dockerNode{}, pairs: map[[2]string]*dockerPair{},
	}
	if err := r.makeNetwork(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// dockerRun is the RunSession of the docker backend: the run's networks and
// every container it started. Its methods may be called from several goroutines.
type dockerRun struct {
	docker     Docker
	pool       *dockertest.Pool
	id         string
	redisImage string
	labels     map[string]string
	prefix     netip.Prefix // the run's /24
	network    *dockertest.Network

	mu       sync.Mutex
	nodes    map[string]*dockerNode    // by name
	pairs    map[[2]string]*dockerPair // by the two names, in order
	nextHost int
	closed   bool
}

// dockerPair is the internal network on which two data nodes replicate.
type dockerPair struct {
	id    string
	names [2]string
	addrs [2]netip.Addr
	cuts  map[string]int // faults now holding each member off it
}

// Name is "docker".
func (r *dockerRun) Name() string { return "docker" }

// PeerAddr is name:6379: names resolve inside the containers.
func (r *dockerRun) PeerAddr(name string) string {
	return net.JoinHostPort(name, strconv.Itoa(dockerRedisPort))
}

// makeNetwork makes the run's bridge network on a free /24 of dockerSubnets.
func (r *dockerRun) makeNetwork(ctx context.Context) error {
	space := netip.MustParsePrefix(dockerSubnets)
	var errs []error
	for range dockerSubnetTrials {
		n, err := rand.Int(rand.Reader, big.NewInt(256))
		if err != nil {
			return fmt.Errorf("docker backend: %w", err)
		}
		a := space.Addr().As4()
		a[2] = byte(n.Int64())
		prefix := netip.PrefixFrom(netip.AddrFrom4(a), 24)
		nw, err := r.pool.CreateNetwork("locklab-"+r.id, func(o *dc.CreateNetworkOptions) {
			o.Driver = "bridge"
			o.Labels = r.labels
			o.Context = ctx
			o.IPAM = &dc.IPAMOptions{Config: []dc.IPAMConfig{{Subnet: netip.PrefixFrom(prefix.Addr(), 26).String()}}}
		})
		if err == nil {
			r.prefix, r.network = prefix, nw
			return nil
		}
		// Another network holds that subnet; try another.
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("docker backend: make the run's network in %s: %w", dockerSubnets, errors.Join(errs...))
}

// hostAddr returns the address on the run network of the node called name.
// Called with r.mu held.
func (r *dockerRun) hostAddr(name string) (netip.Addr, error) {
	host, ok := dockerHosts[name]
	if !ok {
		if n := r.nodes[name]; n != nil {
			return n.ip, nil
		}
		if r.nextHost == 0 {
			r.nextHost = dockerFirstFreeHost
		}
		if r.nextHost >= 63 {
			return netip.Addr{}, errors.New("no address left on the run network")
		}
		host = r.nextHost
		r.nextHost++
	}
	a := r.prefix.Addr().As4()
	a[3] = byte(host)
	return netip.AddrFrom4(a), nil
}

// pair returns the pair network of data nodes a and b, making it on first use.
// Called with r.mu held.
func (r *dockerRun) pair(ctx context.Context, a, b string) (*dockerPair, error) {
	if b < a {
		a, b = b, a
	}
	key := [2]string{a, b}
	if p := r.pairs[key]; p != nil {
		return p, nil
	}
	if len(r.pairs) >= dockerMaxPairs {
		return nil, errors.New("too many pair networks")
	}
	base := r.prefix.Addr().As4()
	base[3] = byte(dockerPairBase + len(r.pairs)*dockerPairSize)
	subnet := netip.PrefixFrom(netip.AddrFrom4(base), 29)
	nw, err := r.pool.Client.CreateNetwork(dc.CreateNetworkOptions{
		Name: fmt.Sprintf("locklab-%s-%s-%s", r.id, a, b), Driver: "bridge", Labels: r.labels, Context: ctx,
		// Internal: no gateway to the host, so no published port and no
		// default route go through it.
		Internal: true,
		IPAM:     &dc.IPAMOptions{Config: []dc.IPAMConfig{{Subnet: subnet.String()}}},
	})
	if err != nil {
		return nil, fmt.Errorf("make the replication network of %s and %s: %w", a, b, err)
	}
	first := subnet.Addr().Next().Next() // .1 is the bridge's
	p := &dockerPair{id: nw.ID, names: key, addrs: [2]netip.Addr{first, first.Next()}, cuts: map[string]int{}}
	r.pairs[key] = p
	return p, nil
}

// addrOf returns the address of member name on p.
func (p *dockerPair) addrOf(name string) netip.Addr {
	if p.names[0] == name {
		return p.addrs[0]
	}
	return p.addrs[1]
}

// StartNode starts redis-server in a container as cfg says and returns once
// it answers on its published port. cfg.Dir is not used: the node's data
// lives in a volume of its own.
func (r *dockerRun) StartNode(ctx context.Context, cfg cluster.NodeConfig) (cluster.Node, error) {
	if cfg.Name == "" || strings.ContainsAny(cfg.Name, "/: \t") {
		return nil, fmt.Errorf("start node %q: name must be a non-empty word", cfg.Name)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("start node %s: run closed", cfg.Name)
	}
	if r.nodes[cfg.Name] != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("start node %s: a node of that name runs", cfg.Name)
	}
	n := &dockerNode{run: r, name: cfg.Name, image: r.redisImage, port: dockerRedisPort, supervised: true}
	var err error
	if n.ip, err = r.hostAddr(cfg.Name); err == nil {
		n.hosts, n.pairs, err = r.nodeHosts(ctx, cfg)
	}
	if err != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
	}
	r.nodes[cfg.Name] = n
	r.mu.Unlock()

	args := append([]string{"--port", strconv.Itoa(dockerRedisPort), "--dir", dockerDataDir}, cfg.ServerArgs()...)
	init := []string{"-ctl", ":" + strconv.Itoa(dockerInitPort), "-data", dockerDataDir}
	server := append([]string{"/usr/bin/redis-server"}, args...)
	if cfg.Sentinel != "" {
		// A Sentinel wants its config file first, and writes to it: it
		// lives in the volume, and locklab-init copies it there afresh
		// after a wipe.
		conf := dockerDataDir + "/" + dockerSentinelConf
		init = append(init, "-seed", dockerSentinelSeed+":"+conf)
		server = append([]string{"/usr/bin/redis-server", conf, "--sentinel"}, args...)
		n.sentinel = cfg.Sentinel + "\n" + fmt.Sprintf("sentinel announce-ip %s\n", cfg.Name)
	}
	n.cmd = append(append(init, "--"), server...)
	if err := n.create(ctx); err != nil {
		r.forget(n)
		return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
	}
	n.admin = redis.NewClient(&redis.Options{Addr: n.addr, ContextTimeoutEnabled: true, DialerRetries: 1})
	if err := backendkit.WaitAdmin(ctx, n.admin); err != nil {
		err = fmt.Errorf("start node %s: admin client: %w", cfg.Name, err)
		return nil, errors.Join(err, n.Stop())
	}
	return n, nil
}

// nodeHosts returns the /etc/hosts entries of a node and the pair networks it
// joins. Called with r.mu held.
func (r *dockerRun) nodeHosts(ctx context.Context, cfg cluster.NodeConfig) ([]string, []*dockerPair, error) {
	var hosts []string
	var pairs []*dockerPair
	peer := map[string]bool{}
	if slices.Contains(cfg.Peers, cfg.Name) {
		for _, other := range cfg.Peers {
			if other == cfg.Name {
				continue
			}
			p, err := r.pair(ctx, cfg.Name, other)
			if err != nil {
				return nil, nil, err
			}
			pairs = append(pairs, p)
			peer[other] = true
			hosts = append(hosts, other+":"+p.addrOf(other).String())
		}
	}
	names := make([]string, 0, len(dockerHosts))
	for name := range dockerHosts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if peer[name] {
			continue
		}
		a, _ := r.hostAddr(name)
		hosts = append(hosts, name+":"+a.String())
	}
	return hosts, pairs, nil
}

// forget drops n from the run's nodes.
func (r *dockerRun) forget(n *dockerNode) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nodes[n.name] == n {
		delete(r.nodes, n.name)
	}
}

// CutReplication disconnects replica from the pair network it shares with
// master. Faults may overlap; the last heal connects it again.
func (r *dockerRun) CutReplication(ctx context.Context, replica, master cluster.Node) (network.Heal, error) {
	rn, ok1 := replica.(*dockerNode)
	mn, ok2 := master.(*dockerNode)
	if !ok1 || !ok2 || rn.run != r || mn.run != r {
		return noHeal, errors.New("cut replication: not nodes of this docker run")
	}
	r.mu.Lock()
	p := r.pairs[pairKey(rn.name, mn.name)]
	r.mu.Unlock()
	if p == nil {
		return noHeal, fmt.Errorf("cut replication: %s and %s share no replication network", rn.name, mn.name)
	}
	if err := rn.setPair(ctx, p, false); err != nil {
		return noHeal, fmt.Errorf("cut replication of %s from %s: %w", rn.name, mn.name, err)
	}
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			// A heal runs whenever the fault ends, maybe after the run's ctx.
			hctx, cancel := context.WithTimeout(context.Background(), dockerStopTimeout)
			defer cancel()
			if err = rn.setPair(hctx, p, true); err != nil {
				err = fmt.Errorf("heal replication of %s from %s: %w", rn.name, mn.name, err)
				return
			}
			// The replica's connection to the master would resume only at
			// TCP's next retransmission, seconds away after a long cut; a
			// local link that toxiproxy heals is reset at once. So end it,
			// as a reset does: the replica dials the same master again and
			// catches up from its backlog. A node that is down or master by
			// now has no such connection.
			if rn.Running() {
				if kerr := rn.Admin().Do(hctx, "CLIENT", "KILL", "TYPE", "master").Err(); kerr != nil {
					err = fmt.Errorf("heal replication of %s from %s: reset its replication connection: %w", rn.name, mn.name, kerr)
				}
			}
		})
		return err
	}, nil
}

// noHeal is the heal of a fault that applied nothing.
func noHeal() error { return nil }

// pairKey names the pair network of a and b in dockerRun.pairs.
func pairKey(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// StartMariaDB starts MariaDB in a container from the image, whose data
// directory was made when the image was built, and returns once it answers.
func (r *dockerRun) StartMariaDB(ctx context.Context, _ string) (cluster.Database, error) {
	image, err := r.docker.image(r.pool, r.docker.MariaDBImage, dockerMariaDBRepo)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	n := &dockerNode{run: r, name: "mariadb", image: image, port: dockerMariaDBPort, cmd: backendkit.MariaDBInnoDBArgs(), noVolume: true}
	if r.nodes[n.name] != nil {
		r.mu.Unlock()
		return nil, errors.New("start mariadb: one runs already")
	}
	n.ip, err = r.hostAddr(n.name)
	if err == nil {
		n.hosts, _, err = r.nodeHosts(ctx, cluster.NodeConfig{Name: n.name})
	}
	if err != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	r.nodes[n.name] = n
	r.mu.Unlock()
	if err := n.create(ctx); err != nil {
		r.forget(n)
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", n.addr
	cfg.Timeout = backendkit.MariaDBDialTimeout
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start mariadb: %w", err), n.Stop())
	}
	m := &dockerMariaDB{node: n, cfg: cfg, db: sql.OpenDB(connector)}
	probeCfg := cfg.Clone()
	// Until mariadbd listens, the published port accepts and closes at once;
	// don't log that.
	probeCfg.Logger = log.New(io.Discard, "", 0)
	probeConnector, err := mysql.NewConnector(probeCfg)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start mariadb: %w", err), m.Stop())
	}
	probe := sql.OpenDB(probeConnector)
	defer probe.Close()
	sctx, cancel := context.WithTimeout(ctx, backendkit.MariaDBStartCap)
	defer cancel()
	err = backendkit.PollUntil(sctx, "await mariadb", func(ctx context.Context) (string, error) {
		if err := probe.PingContext(ctx); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start mariadb: %w; log tail:\n%s", err, n.logTail()), m.Stop())
	}
	return m, nil
}

// Close removes every container, network and volume of the run, those its
// servers' Stop removed already aside.
func (r *dockerRun) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	nodes := make([]*dockerNode, 0, len(r.nodes))
	for _, n := range r.nodes {
		nodes = append(nodes, n)
	}
	r.mu.Unlock()
	var errs []error
	for _, n := range nodes {
		errs = append(errs, n.Stop())
	}
	for _, p := range r.pairs {
		errs = append(errs, r.pool.Client.RemoveNetwork(p.id))
	}
	if r.network != nil {
		errs = append(errs, r.pool.Client.RemoveNetwork(r.network.Network.ID))
	}
	// Whatever a failed step left, by label.
	errs = append(errs, removeLabelled(r.pool.Client, dockerRunLabel+"="+r.id, func(map[string]string) bool { return true }))
	return errors.Join(errs...)
}

// dockerNode is one container of a run: a redis-server, a Sentinel or MariaDB.
// Its methods may be called from several goroutines.
type dockerNode struct {
	run      *dockerRun
	name     string
	image    string
	port     int      // the server's port inside the container
	cmd      []string // the image's arguments
	sentinel string   // the Sentinel's config file
	noVolume bool     // MariaDB keeps its data in the container
	// supervised: the server runs under locklab-init, which kills and
	// restarts it in place (Redis, not MariaDB, which no fault touches).
	supervised bool
	ip         netip.Addr
	hosts      []string
	pairs      []*dockerPair
	admin      *redis.Client

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
		if n.addr == "" && strings.Contains(err.Error(), "address already in use") && trial < dockerStartTrials {
			n.hostPort, n.initPort = 0, 0
			continue
		}
		return err
	}
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
			Image: n.image, Cmd: n.cmd, Hostname: n.name, Labels: n.run.labels,
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
	if n.sentinel != "" {
		if err := n.upload(ctx, dockerSentinelSeed, n.sentinel); err != nil {
			return err
		}
	}
	if err := client.StartContainer(c.ID, nil); err != nil {
		return fmt.Errorf("start container: %w", err)
	}
	return nil
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
	if err := backendkit.WaitAdmin(ctx, n.admin); err != nil {
		return fmt.Errorf("restart node %s: admin client: %w; log tail:\n%s", n.name, err, n.logTail())
	}
	return nil
}

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

// SetupInventory creates the inventory row, as the local MariaDB does.
func (m *dockerMariaDB) SetupInventory(ctx context.Context, stock int64) error {
	return backendkit.SetupInventory(ctx, m.db, stock)
}

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

// ownerLabels returns the labels that name run id and its owning process.
func ownerLabels(id string) map[string]string {
	host, _ := os.Hostname()
	return map[string]string{
		dockerRunLabel:   id,
		dockerPIDLabel:   strconv.Itoa(os.Getpid()),
		dockerHostLabel:  host,
		dockerStartLabel: processStart(os.Getpid()),
	}
}

// ownerGone reports whether the process that labels name is dead on this
// host: its pid runs no process, or another process since.
func ownerGone(labels map[string]string) bool {
	host, _ := os.Hostname()
	if labels[dockerHostLabel] != host {
		return false // another machine's run: we cannot tell
	}
	pid, err := strconv.Atoi(labels[dockerPIDLabel])
	if err != nil || pid <= 0 {
		return true
	}
	if !processAlive(pid) {
		return true
	}
	start := labels[dockerStartLabel]
	return start != "" && processStart(pid) != start
}

// sweepDocker removes the containers, networks and volumes that killed
// runs of this host left. It is best effort: what it cannot remove now,
// the next start tries again.
func sweepDocker(client *dc.Client) {
	_ = removeLabelled(client, dockerRunLabel, ownerGone)
}

// removeLabelled removes the containers, then the networks, then the volumes
// that carry label (key or key=value) and that pick accepts.
func removeLabelled(client *dc.Client, label string, pick func(map[string]string) bool) error {
	var errs []error
	containers, err := client.ListContainers(dc.ListContainersOptions{All: true, Filters: map[string][]string{"label": {label}}})
	errs = append(errs, err)
	for _, c := range containers {
		if pick(c.Labels) {
			err := client.RemoveContainer(dc.RemoveContainerOptions{ID: c.ID, Force: true, RemoveVolumes: true})
			var gone *dc.NoSuchContainer
			if !errors.As(err, &gone) {
				errs = append(errs, err)
			}
		}
	}
	networks, err := client.FilteredListNetworks(dc.NetworkFilterOpts{"label": {label: true}})
	errs = append(errs, err)
	for _, nw := range networks {
		if pick(nw.Labels) {
			errs = append(errs, client.RemoveNetwork(nw.ID))
		}
	}
	volumes, err := client.ListVolumes(dc.ListVolumesOptions{Filters: map[string][]string{"label": {label}}})
	errs = append(errs, err)
	for _, v := range volumes {
		if pick(v.Labels) {
			errs = append(errs, client.RemoveVolumeWithOptions(dc.RemoveVolumeOptions{Name: v.Name, Force: true}))
		}
	}
	return errors.Join(errs...)
}

// randomHex returns n random bytes in hex.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// processStart returns the boot ID and start time of process pid, where
// /proc tells them, else "": with them a reused pid does not pass for the owner.
func processStart(pid int) string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name, field 2, may hold spaces; field 22 counts from its end.
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(fields) < 20 {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "." + fields[19]
}
