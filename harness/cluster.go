package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// Topology names a Redis deployment.
type Topology string

// Single is one Redis master.
const Single Topology = "single"

// topologies maps each topology to the number of lock masters it starts.
var topologies = map[Topology]int{Single: 1}

// Cluster is the running deployment of one run: the lock nodes, the
// inventory node (which no fault touches), and the network between them and
// the clients.
type Cluster struct {
	topology  Topology
	dir       string
	masters   []*Node
	inventory *Node
	network   *Network
}

// StartCluster starts topo in a fresh temporary directory. Close stops every
// process and removes the directory, also after a failed start.
func StartCluster(ctx context.Context, topo Topology) (_ *Cluster, err error) {
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
	for i := range masters {
		n, err := StartNode(ctx, NodeConfig{Name: fmt.Sprintf("n%d", i+1), Dir: dir, Server: server})
		if err != nil {
			return nil, err
		}
		c.masters = append(c.masters, n)
	}
	if c.inventory, err = StartNode(ctx, NodeConfig{Name: "inventory", Dir: dir, Server: server}); err != nil {
		return nil, err
	}
	if c.network, err = StartNetwork(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Topology is the deployment this cluster runs.
func (c *Cluster) Topology() Topology { return c.topology }

// Masters are the nodes that hold locks.
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
	for _, n := range append(c.masters, c.inventory) {
		if n != nil {
			errs = append(errs, n.Stop())
		}
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}
