// Package cluster starts and stops what a run talks to: the lock service's
// deployment, started by the service's own package (LockService), the
// inventory node that no fault touches, the server of an SQL inventory
// (Config.Resource), and the in-process toxiproxy network every client
// link goes through. It holds what every backend shares; the servers
// themselves are started by a Backend from a package of its own,
// cluster/local (processes) or cluster/docker (containers), which the
// caller names in Config.
package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/locklab/locklab/network"
)

// Topology names a deployment of a lock service.
type Topology string

// Topologies.
const (
	Single     Topology = "single"     // one Redis master
	Replicated Topology = "replicated" // a master, two replicas, three Sentinels
	Redlock    Topology = "redlock"    // five independent masters
	// MariaDBTopology is one MariaDB server holding the lock table
	// (service/sqldb): the lock is a row, a row lock or a named lock, and
	// each client reaches the server through its own link.
	MariaDBTopology Topology = "mariadb"
	// PostgresTopology is one PostgreSQL server holding the same lock
	// table, as MariaDBTopology does.
	PostgresTopology Topology = "postgres"
)

// Service is what a family of locks keeps its state on, and so what a
// client is handed to reach it (harness.Client.Redis, or the
// handle of a service behind the seam: Client.Handle).
type Service string

// Services.
const (
	Redis      Service = "redis"
	MariaDB    Service = "mariadb"
	PostgreSQL Service = "postgres"
)

// topologies maps each topology to its service.
var topologies = map[Topology]struct {
	service Service
	// seam: the service's own package starts it (Config.Service).
	seam bool
}{Single: {Redis, true}, Replicated: {Redis, true}, Redlock: {Redis, true}, MariaDBTopology: {MariaDB, true}, PostgresTopology: {PostgreSQL, true},
	EtcdTopology: {Etcd, true}, ZooKeeperTopology: {ZooKeeper, true}, MemcachedTopology: {Memcached, true}}

// Service is the lock service t deploys; "" counts as Single.
func (t Topology) Service() Service {
	if t == "" {
		t = Single
	}
	return topologies[t].service
}

// Known reports whether t names a topology; "" counts as Single.
func Known(t Topology) bool {
	_, ok := topologies[t]
	return ok || t == ""
}

// Cluster is the running deployment of one run: the lock nodes, the
// inventory node (which no fault touches), and the network between them and
// the clients.
type Cluster struct {
	topology   Topology
	backend    Backend
	dir        *RunDir
	masters    []Node
	inventory  Node     // a redis-server, which the workload's resource lives on
	sqlStock   Database // the inventory, when it lives in MariaDB or PostgreSQL (Config.Resource)
	network    *network.Proxy
	session    RunSession // the backend's run, which started the servers
	deployment Deployment // a service started through the seam (service.go)
	config     Config     // what started it, which a Pool keeps it by
	kept       Kept       // what its clients leave running between runs
	reused     bool       // a Pool handed it out again, after a run and a reset
}

// Config says what a cluster starts.
type Config struct {
	Topology    Topology    // "" means Single
	Persistence Persistence // what the lock nodes keep on disk across a restart
	// Resource, when not nil, starts the SQL server that keeps the
	// inventory (SQLInventory): MariaDB beside the lock service, or the
	// lock service's own server, where a lock's transaction can write it.
	Resource ResourceService
	Backend  Backend // starts the servers: local.Local{} or docker.Docker{}; required
	// Service starts the topology's lock service when its own package
	// does (LockService); nil for the services Start starts itself.
	Service LockService
}

// Start starts a topology in a fresh run directory. Close stops every
// server and removes the directory, also after a failed start.
func Start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	topo := cfg.Topology
	if topo == "" {
		topo = Single
	}
	spec, ok := topologies[topo]
	if !ok {
		return nil, fmt.Errorf("unknown topology %q", topo)
	}
	backend := cfg.Backend
	if backend == nil {
		return nil, errors.New("cluster: Config.Backend is nil: name the backend that starts the servers (local.Local{}, docker.Docker{})")
	}
	dir, err := NewRunDir()
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c := &Cluster{topology: topo, backend: backend, dir: dir, config: cfg}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if c.session, err = backend.StartRun(ctx); err != nil {
		return nil, err
	}
	run := c.session
	// The inventory starts beside the topology, which needs nothing of it.
	inventoryUp := make(chan struct{})
	var inventoryErr error
	go func() {
		defer close(inventoryUp)
		c.inventory, inventoryErr = run.StartNode(ctx, NodeConfig{Name: "inventory", Dir: dir.Path()})
	}()
	// Before Close, if the start fails.
	defer func() { <-inventoryUp }()
	if c.network, err = network.Start(ctx); err != nil {
		return nil, err
	}
	if spec.seam {
		if err := c.startService(ctx, run, cfg); err != nil {
			return nil, err
		}
	}
	if cfg.Resource != nil {
		if c.sqlStock, err = cfg.Resource.StartResource(ctx, run, dir.Path(), c.deployment); err != nil {
			return nil, err
		}
	}
	if <-inventoryUp; inventoryErr != nil {
		return nil, inventoryErr
	}
	return c, nil
}

// Topology is the deployment this cluster runs.
func (c *Cluster) Topology() Topology { return c.topology }

// ServerPids are the pids of the processes at the top of the cluster's
// servers (ServerProcess): its lock nodes, Sentinels, inventory and
// databases, on either backend.
func (c *Cluster) ServerPids() []int {
	servers := []any{c.inventory, c.sqlStock}
	for _, n := range c.masters {
		servers = append(servers, n)
	}
	if w, ok := c.deployment.(Watchers); ok {
		for _, n := range w.Watchers() {
			servers = append(servers, n)
		}
	}
	var pids []int
	for _, s := range servers {
		if p, ok := s.(ServerProcess); ok {
			if pid := p.Pid(); pid > 0 {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// Backend is what started the servers.
func (c *Cluster) Backend() Backend { return c.backend }

// LockNodes are the nodes that hold the lock's state: the single node,
// Redlock's masters, or the replicated topology's data nodes (master and
// replicas, the master at the start first).
func (c *Cluster) LockNodes() []Node { return c.masters }

// Inventory is the node that holds the protected resource: a
// redis-server, whichever service the lock is on, which no fault touches.
func (c *Cluster) Inventory() Node { return c.inventory }

// SQLInventory is the server of the SQL inventory (MariaDB, or the postgres
// topology's PostgreSQL), or nil when the cluster has none.
func (c *Cluster) SQLInventory() Database { return c.sqlStock }

// Network is the toxiproxy server every client link goes through.
func (c *Cluster) Network() *network.Proxy { return c.network }

// Close stops every node and the network and removes the run's directory.
func (c *Cluster) Close() error {
	// What the clients left running goes first, while the servers it
	// talks to are still up.
	errs := []error{c.kept.close()}
	if c.network != nil {
		errs = append(errs, c.network.Close())
	}
	if c.deployment != nil {
		errs = append(errs, c.deployment.Stop()) // stops its servers, c.masters
	}
	for _, n := range append(c.masters, c.inventory) {
		if n != nil {
			errs = append(errs, n.Stop())
		}
	}
	if c.sqlStock != nil {
		errs = append(errs, c.sqlStock.Stop()) // once or twice, when the lock's server keeps it: Stop may be
	}
	if c.session != nil {
		errs = append(errs, c.session.Close())
	}
	errs = append(errs, c.dir.Remove())
	return errors.Join(errs...)
}
