package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
)

// Topology names a Redis deployment.
type Topology string

// Topologies.
const (
	Single     Topology = "single"     // one Redis master
	Replicated Topology = "replicated" // a master, two replicas, three Sentinels
	Redlock    Topology = "redlock"    // five independent masters
)

// topologies maps each topology to the number of independent lock masters it
// starts; the replicated one starts its own set.
var topologies = map[Topology]int{Single: 1, Replicated: 0, Redlock: 5}

// Cluster is the running deployment of one run: the lock nodes, the
// inventory node (which no fault touches), and the network between them and
// the clients.
type Cluster struct {
	topology  Topology
	dir       string
	masters   []*Node
	inventory *Node
	mariadb   *MariaDB // the inventory, when it lives in MariaDB
	network   *Network
	// replicated runs the Sentinels of the replicated topology; its data
	// nodes are masters, the first one the master at the start.
	replicated *ReplicaSet
}

// ClusterConfig says what a cluster starts.
type ClusterConfig struct {
	Topology    Topology    // "" means Single
	Persistence Persistence // what the lock nodes keep on disk across a restart
	Resource    Resource    // where the inventory lives; "" means Redis
}

// StartCluster starts a topology in a fresh temporary directory. Close stops
// every process and removes the directory, also after a failed start.
func StartCluster(ctx context.Context, cfg ClusterConfig) (_ *Cluster, err error) {
	topo := cfg.Topology
	if topo == "" {
		topo = Single
	}
	masters, ok := topologies[topo]
	if !ok {
		return nil, fmt.Errorf("unknown topology %q", topo)
	}
	server, err := RedisServerPath()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "locklab-")
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c := &Cluster{topology: topo, dir: dir}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if topo == Replicated {
		if c.network, err = StartNetwork(ctx); err != nil {
			return nil, err
		}
		if c.replicated, err = StartReplicaSet(ctx, dir, server, c.network); err != nil {
			return nil, err
		}
		c.masters = c.replicated.Nodes()
	}
	for i := range masters {
		n, err := StartNode(ctx, NodeConfig{Name: fmt.Sprintf("n%d", i+1), Dir: dir, Server: server, Persistence: cfg.Persistence})
		if err != nil {
			return nil, err
		}
		c.masters = append(c.masters, n)
	}
	if c.inventory, err = StartNode(ctx, NodeConfig{Name: "inventory", Dir: dir, Server: server}); err != nil {
		return nil, err
	}
	if cfg.Resource == MariaDBResource {
		if c.mariadb, err = StartMariaDB(ctx, dir); err != nil {
			return nil, err
		}
	}
	if c.network == nil {
		if c.network, err = StartNetwork(ctx); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Topology is the deployment this cluster runs.
func (c *Cluster) Topology() Topology { return c.topology }

// Masters are the nodes that hold locks: for the replicated topology, its
// data nodes, the master at the start first.
func (c *Cluster) Masters() []*Node { return c.masters }

// Inventory is the node that holds the protected resource.
func (c *Cluster) Inventory() *Node { return c.inventory }

// Network is the toxiproxy server every client link goes through.
func (c *Cluster) Network() *Network { return c.network }

// Close stops every node and the network and removes the run's directory.
func (c *Cluster) Close() error {
	var errs []error
	if c.network != nil {
		errs = append(errs, c.network.Close())
	}
	if c.replicated != nil {
		errs = append(errs, c.replicated.Close())
	}
	for _, n := range append(c.masters, c.inventory) {
		if n != nil {
			errs = append(errs, n.Stop())
		}
	}
	if c.mariadb != nil {
		errs = append(errs, c.mariadb.Stop())
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}

// ClientOptions describe a client made by Connect.
type ClientOptions struct {
	ID      int
	TTL     time.Duration // the lease TTL locks are asked to use; 0 means 300 ms
	Timeout time.Duration // Redis timeouts; 0 means 1 s
	// Direct dials the nodes without network links, so no fault reaches it.
	Direct bool
}

// Connect makes a client outside any run, for testing or benchmarking a lock
// on its own. Close it when done.
func (c *Cluster) Connect(ctx context.Context, opts ClientOptions) (*Client, error) {
	if opts.TTL == 0 {
		opts.TTL = 300 * time.Millisecond
	}
	if opts.Timeout == 0 {
		opts.Timeout = time.Second
	}
	h, _ := NewHistory("") // in memory: cannot fail
	cfg := clientConfig{id: opts.ID, ttl: opts.TTL, timeout: opts.Timeout, history: h, points: newFailpoints(nil)}
	if opts.Direct {
		cfg.master, cfg.inventory = c.masters[0].Addr(), c.inventory.Addr()
		for _, n := range c.masters {
			cfg.nodes = append(cfg.nodes, n.Addr())
		}
		return newClient(ctx, cfg), nil
	}
	client, _, err := c.connect(ctx, cfg)
	return client, err
}

// connect completes cfg with one link per lock master for client cfg.id and
// makes the client.
func (c *Cluster) connect(ctx context.Context, cfg clientConfig) (*Client, []*Link, error) {
	var links []*Link
	for _, n := range c.masters {
		l, err := c.network.Link(ctx, fmt.Sprintf("c%d-%s", cfg.id, n.Name()), n.Addr())
		if err != nil {
			return nil, nil, err
		}
		links = append(links, l)
		cfg.nodes = append(cfg.nodes, l.Addr())
	}
	cfg.master, cfg.inventory = cfg.nodes[0], c.inventory.Addr()
	if c.replicated != nil {
		// Sentinel reports real addresses; this client dials each node
		// through its own link to it.
		byNode := map[string]string{}
		for i, n := range c.masters {
			byNode[n.Addr()] = links[i].Addr()
		}
		cfg.nodes = nil
		cfg.failover = func(opts *redis.Options) *redis.Client {
			return c.replicated.FailoverClient(opts, func(ctx context.Context, addr string) (net.Conn, error) {
				if via, ok := byNode[addr]; ok {
					addr = via
				}
				var d net.Dialer
				return d.DialContext(ctx, "tcp", addr)
			})
		}
	}
	if c.mariadb != nil {
		cfg.mariaDSN = c.mariadb.DSN()
	}
	return newClient(ctx, cfg), links, nil
}
