package docker

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"
	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/network"
)

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
	names  [2]string
	subnet netip.Prefix
	addrs  [2]netip.Addr
	cuts   map[string]int // faults now holding each member off it

	// The first of the two nodes to start makes the network, outside the
	// run's lock (it takes tens of milliseconds): once, then id or err.
	once sync.Once
	id   string
	err  error
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

// pair returns the pair network of data nodes a and b, reserving its subnet
// on first use; create makes it. Called with r.mu held.
func (r *dockerRun) pair(a, b string) (*dockerPair, error) {
	key := pairKey(a, b)
	if p := r.pairs[key]; p != nil {
		return p, nil
	}
	if len(r.pairs) >= dockerMaxPairs {
		return nil, errors.New("too many pair networks")
	}
	base := r.prefix.Addr().As4()
	base[3] = byte(dockerPairBase + len(r.pairs)*dockerPairSize)
	subnet := netip.PrefixFrom(netip.AddrFrom4(base), 29)
	first := subnet.Addr().Next().Next() // .1 is the bridge's
	p := &dockerPair{names: key, subnet: subnet, addrs: [2]netip.Addr{first, first.Next()}, cuts: map[string]int{}}
	r.pairs[key] = p
	return p, nil
}

// create makes the pair's network unless it is made; every caller gets the
// first one's error.
func (p *dockerPair) create(ctx context.Context, r *dockerRun) error {
	p.once.Do(func() {
		nw, err := r.pool.Client.CreateNetwork(dc.CreateNetworkOptions{
			Name: fmt.Sprintf("locklab-%s-%s-%s", r.id, p.names[0], p.names[1]), Driver: "bridge", Labels: r.labels, Context: ctx,
			// Internal: no gateway to the host, so no published port and no
			// default route go through it.
			Internal: true,
			IPAM:     &dc.IPAMOptions{Config: []dc.IPAMConfig{{Subnet: p.subnet.String()}}},
		})
		if err != nil {
			p.err = fmt.Errorf("make the replication network of %s and %s: %w", p.names[0], p.names[1], err)
			return
		}
		p.id = nw.ID
	})
	return p.err
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
		n.hosts, n.pairs, err = r.nodeHosts(cfg)
	}
	if err != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
	}
	r.nodes[cfg.Name] = n
	r.mu.Unlock()
	for _, p := range n.pairs {
		if err := p.create(ctx, r); err != nil {
			r.forget(n)
			return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
		}
	}

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
		n.files = map[string]string{dockerSentinelSeed: cfg.Sentinel + "\n" + fmt.Sprintf("sentinel announce-ip %s\n", cfg.Name)}
	}
	if cfg.After != nil {
		init = append(init, "-hold")
	}
	n.cmd = append(append(init, "--"), server...)
	if err := n.create(ctx); err != nil {
		r.forget(n)
		return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
	}
	n.admin = redis.NewClient(&redis.Options{Addr: n.addr, ContextTimeoutEnabled: true, DialerRetries: 1})
	if cfg.After != nil {
		// The container runs; its server waits for this.
		err := cfg.After(ctx)
		if err == nil {
			err = n.release(ctx)
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("start node %s: %w", cfg.Name, err), n.Stop())
		}
	}
	if err := backendkit.WaitAdmin(ctx, n.admin); err != nil {
		err = fmt.Errorf("start node %s: admin client: %w", cfg.Name, err)
		return nil, errors.Join(err, n.Stop())
	}
	return n, nil
}

// release starts the server of a node made with -hold, once locklab-init
// listens: a fresh container's may not yet.
func (n *dockerNode) release(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, backendkit.AdminCap)
	defer cancel()
	return backendkit.PollUntil(ctx, "start the server", func(ctx context.Context) (string, error) {
		// start does nothing to a server that runs: a start whose answer
		// was lost can be sent again.
		if err := n.control(ctx, "start"); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
}

// nodeHosts returns the /etc/hosts entries of a node and the pair networks it
// joins. Called with r.mu held.
func (r *dockerRun) nodeHosts(cfg cluster.NodeConfig) ([]string, []*dockerPair, error) {
	var hosts []string
	var pairs []*dockerPair
	peer := map[string]bool{}
	if slices.Contains(cfg.Peers, cfg.Name) {
		for _, other := range cfg.Peers {
			if other == cfg.Name {
				continue
			}
			p, err := r.pair(cfg.Name, other)
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

// errNameTaken is a node whose name another node of the run has.
var errNameTaken = errors.New("a node of that name runs")

// createNode makes n a node of the run, with its address on the run's
// network and its hosts, and creates its container; a container that
// cannot be created leaves no node behind.
func (r *dockerRun) createNode(ctx context.Context, n *dockerNode) error {
	r.mu.Lock()
	if r.closed {
		// Close removed what it knew of: a container made now would outlive the run.
		r.mu.Unlock()
		return errors.New("run closed")
	}
	if r.nodes[n.name] != nil {
		r.mu.Unlock()
		return errNameTaken
	}
	var err error
	if n.ip, err = r.hostAddr(n.name); err == nil {
		n.hosts, _, err = r.nodeHosts(cluster.NodeConfig{Name: n.name})
	}
	if err != nil {
		r.mu.Unlock()
		return err
	}
	r.nodes[n.name] = n
	r.mu.Unlock()
	if err := n.create(ctx); err != nil {
		r.forget(n)
		return err
	}
	return nil
}

// startAll starts the n servers of an etcd cluster or a ZooKeeper
// ensemble at once, the ith by start(i), since each waits for a quorum of
// the others. It returns those that started, and the others' errors.
func startAll(n int, start func(i int) (*dockerNode, error)) ([]*dockerNode, error) {
	nodes := make([]*dockerNode, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { nodes[i], errs[i] = start(i) })
	}
	wg.Wait()
	return slices.DeleteFunc(nodes, func(n *dockerNode) bool { return n == nil }), errors.Join(errs...)
}

// logTails are the last lines of the nodes' logs, each under its name.
func logTails(nodes []*dockerNode) string {
	var tails []string
	for _, n := range nodes {
		tails = append(tails, n.name+":\n"+n.logTail())
	}
	return strings.Join(tails, "\n")
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
	n := &dockerNode{run: r, name: "mariadb", image: image, port: dockerMariaDBPort, cmd: backendkit.MariaDBInnoDBArgs(), noVolume: true}
	if err := r.createNode(ctx, n); errors.Is(err, errNameTaken) {
		return nil, errors.New("start mariadb: one runs already")
	} else if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", n.addr
	cfg.Timeout = backendkit.SQLDialTimeout
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
		if p.id != "" {
			errs = append(errs, r.pool.Client.RemoveNetwork(p.id))
		}
	}
	if r.network != nil {
		errs = append(errs, r.pool.Client.RemoveNetwork(r.network.Network.ID))
	}
	// Whatever a failed step left, by label.
	errs = append(errs, removeLabelled(r.pool.Client, dockerRunLabel+"="+r.id, func(map[string]string) bool { return true }))
	return errors.Join(errs...)
}
