package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/network"
)

// LockService is a lock service that plugs into a cluster through one
// seam: its own package starts its deployment on any backend and reads the
// lock's state there, so that adding a service touches no other package of
// the cluster. Every service is behind it, each in a package of its own
// (service/...).
type LockService interface {
	// Name is the service, as its topologies name it.
	Name() Service
	// Start starts the service's deployment of one run: its servers, each
	// started through run (a ServerStarter on every backend), their files
	// under dir. It returns once every lock node answers.
	Start(ctx context.Context, run RunSession, dir string) (Deployment, error)
}

// Deployment is a running lock service of one run.
type Deployment interface {
	// Nodes are its lock nodes, each reached by every client through a
	// link of its own, in the order the client's handle is dialled with.
	Nodes() []Node
	// LockState reads the lock named key on the servers, for the liveness
	// check's detail.
	LockState(ctx context.Context, key string) (State, error)
	// Stop stops every server and removes their files; it may be called
	// twice.
	Stop() error
}

// ServerSpec is one server of a lock service, as any backend runs it: the
// program and its arguments, and how to tell it answers. A backend that
// runs it as a process finds Program on this machine; one that runs it in
// a container runs the image built from it (docker/build.sh).
type ServerSpec struct {
	// Name names the server in its run ("m1"); its files live in
	// Dir/Name.
	Name string
	// Dir is the run's directory.
	Dir string
	// Program is the server's binary, found on PATH unless absolute; its
	// base name names its image.
	Program string
	// Args are its arguments when it listens on host (an interface's
	// address: a process listens on 127.0.0.1, a container on every
	// interface) and port. A restart runs the server with the same ones.
	Args func(host string, port int) []string
	// Ready reports nil once the server at addr serves requests, or the
	// error that shows it does not yet; the start polls it.
	Ready func(ctx context.Context, addr string) error
	// Missing wraps the error of a start that found no Program, so that a
	// suite skips the run as one that lacks the service.
	Missing error
	// Clock says the server's clocks may be made to jump
	// (ClockJumper): on local processes it runs under libfaketime, where
	// it is installed, its wall and monotonic clocks alike read ahead of
	// the real ones by an offset that JumpClock moves. What a C server
	// times expiry with (memcached's tick reads CLOCK_MONOTONIC) then
	// jumps too. A backend that cannot move them says so at the jump.
	Clock bool
}

// ServerStarter is a RunSession that can start the server of any service
// from its ServerSpec. Its Node keeps nothing across a restart unless the
// server itself does: a restart runs Program again with the same Args.
type ServerStarter interface {
	// StartServer starts spec's server and returns once Ready says it
	// serves.
	StartServer(ctx context.Context, spec ServerSpec) (Node, error)
}

// StartServer starts spec on run, or says in one line that the backend
// cannot.
func StartServer(ctx context.Context, run RunSession, spec ServerSpec) (Node, error) {
	starter, ok := run.(ServerStarter)
	if !ok {
		return nil, fmt.Errorf("%w: the %s backend cannot start %s", spec.Missing, run.Name(), spec.Program)
	}
	return starter.StartServer(ctx, spec)
}

// PollUntil calls check every few milliseconds until it reports nothing
// left to wait for (an empty string) or fails, or ctx ends; the error then
// says what it was still waiting for. A service's package waits on its
// servers with it, as the backends do.
func PollUntil(ctx context.Context, what string, check func(ctx context.Context) (waiting string, err error)) error {
	return PollEvery(ctx, 5*time.Millisecond, what, check)
}

// PollEvery is PollUntil at its own pace: check runs every period.
func PollEvery(ctx context.Context, period time.Duration, what string, check func(ctx context.Context) (waiting string, err error)) error {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		waiting, err := check(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if waiting == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (still: %s)", what, ctx.Err(), waiting)
		case <-tick.C:
		}
	}
}

// ErrNoService means a topology's service was not given: a Config whose
// topology is served through the seam names its LockService.
var ErrNoService = errors.New("no lock service given")

// Setup is what a TopologyStarter is told of the cluster it starts in.
type Setup struct {
	Topology    Topology    // the topology to deploy
	Persistence Persistence // what its lock nodes keep on disk across a restart
	Network     *network.Proxy
}

// TopologyStarter is a LockService that deploys more than one topology
// (Redis: single, replicated, redlock), or needs the cluster's network for
// links of its own (the replicated topology's replication detours): Start
// calls StartTopology in place of its Start.
type TopologyStarter interface {
	StartTopology(ctx context.Context, run RunSession, dir string, setup Setup) (Deployment, error)
}

// Watchers is a Deployment with servers beside its lock nodes that hold no
// lock but watch those that do (Redis Sentinels): servers of the run all
// the same, whose processes the lag meter reads (ServerPids).
type Watchers interface {
	Watchers() []Node
}

// startService starts the deployment of cfg's service.
func (c *Cluster) startService(ctx context.Context, run RunSession, cfg Config) error {
	s := cfg.Service
	if s == nil {
		return fmt.Errorf("cluster: topology %s: %w (Config.Service)", c.topology, ErrNoService)
	}
	if s.Name() != c.topology.Service() {
		return fmt.Errorf("cluster: topology %s is served by %s, not %s", c.topology, c.topology.Service(), s.Name())
	}
	var d Deployment
	var err error
	if ts, ok := s.(TopologyStarter); ok {
		d, err = ts.StartTopology(ctx, run, c.dir.Path(), Setup{Topology: c.topology, Persistence: cfg.Persistence, Network: c.network})
	} else {
		d, err = s.Start(ctx, run, c.dir.Path())
	}
	if err != nil {
		return err
	}
	c.deployment = d
	c.masters = d.Nodes()
	return nil
}

// Deployment is the deployment of a service started through the seam
// (LockService), or nil.
func (c *Cluster) Deployment() Deployment { return c.deployment }

// Evicter is a Deployment whose servers evict items when their memory is
// full, as a cache does (memcached's LRU): a held lock's item among them.
type Evicter interface {
	// Evict writes items of the size of key's item, which the server
	// cannot all keep, until it evicts key's item; it reports how many it
	// wrote. It fails when key holds nothing, or when the item outlives
	// every write it is allowed.
	Evict(ctx context.Context, key string) (written int, err error)
}

// Leader is a Deployment whose servers elect a leader among them, as
// consensus services do: what fault.KillLeader kills (Cluster.Leader).
type Leader interface {
	// Leader is the index in Nodes of the server that leads now, or an
	// error when none does (an election is under way, or no quorum
	// answers).
	Leader(ctx context.Context) (index int, err error)
}

// Leader is the node that leads the lock service now, and its index in
// LockNodes: what fault.KillLeader kills. A service without a leader says
// so in one line.
func (c *Cluster) Leader(ctx context.Context) (Node, int, error) {
	l, ok := c.deployment.(Leader)
	if !ok {
		return nil, -1, fmt.Errorf("topology %s has no leader", c.topology)
	}
	i, err := l.Leader(ctx)
	if err != nil {
		return nil, -1, err
	}
	return c.masters[i], i, nil
}

// Stock is a Deployment that keeps a run's inventory itself, so that a
// lock's holder can guard its write by the lock in one request (etcd's
// transaction on the lock key): the runner's resource of that service.
type Stock interface {
	// SetStock puts the starting stock, past any link.
	SetStock(ctx context.Context, stock int64) error
	// ReadStock reads what is left of the stock, past any link.
	ReadStock(ctx context.Context) (int64, error)
}

// ResourceService starts the SQL server that keeps a run's inventory
// (Config.Resource): MariaDB beside the lock service, or the lock
// service's own server when it is one (service/sqldb).
type ResourceService interface {
	// StartResource starts the inventory's server on run, its files under
	// dir, or finds it in lock, the run's deployment (nil when its service
	// is not behind the seam).
	StartResource(ctx context.Context, run RunSession, dir string, lock Deployment) (Database, error)
}

// ConnectionKiller is a Deployment whose server can end a client's
// connections as an administrator does, rolling back what each held: what
// fault.KillConnection does (the SQL services').
type ConnectionKiller interface {
	// KillConnection ends the server's connection id; one gone already is
	// no error.
	KillConnection(ctx context.Context, id int64) error
	// ConnectionsFrom are the ids of the server's connections from local
	// TCP port port of this machine: those a link made for its client
	// (network.Link.UpstreamPorts), a lock program's, whose ids the harness
	// never learns.
	ConnectionsFrom(ctx context.Context, port int) ([]int64, error)
	// Holds reports whether connection id holds the lock named key in its
	// session: a named or advisory lock on key, or an open transaction's
	// row locks on the lock table; what the server frees when it ends the
	// connection. A lock that lives in a row outlives it.
	Holds(ctx context.Context, id int64, key string) (bool, error)
}

// Stamper is a Deployment whose leader stamps each write with its own
// wall clock (ZooKeeper's znode mtime): how fault.ClockJumpServer proves
// that a jump of the leader's clock took.
type Stamper interface {
	// Stamp makes a write of its own, past any link, and returns the time
	// the leader stamped it with.
	Stamp(ctx context.Context) (time.Time, error)
}

// State is what a lock service's servers show of one lock, read past any
// link: for the liveness check's detail and the timeline's last word on a
// stuck lock.
type State struct {
	// Held says the servers hold the lock for someone.
	Held bool
	// Expires says the hold ends by itself: a key's TTL, a lease, a row's
	// expiry. A hold without one lasts until it is released or its
	// session or connection ends (GET_LOCK, an advisory lock, an
	// ephemeral node).
	Expires bool
	// Left is the time until it expires, when it Expires, in the service's
	// own unit (whole seconds on etcd and memcached).
	Left time.Duration
}

// Free is the State of a lock nobody holds.
var Free = State{}

// Until is the State of a lock held for left more.
func Until(left time.Duration) State { return State{Held: true, Expires: true, Left: max(left, 0)} }

// Unexpiring is the State of a lock held with no expiry.
func Unexpiring() State { return State{Held: true} }

// String says s in a few words: "free", "held, no expiry", "held, 150 ms
// left".
func (s State) String() string {
	switch {
	case !s.Held:
		return "free"
	case !s.Expires:
		return "held, no expiry"
	}
	return fmt.Sprintf("held, %s left", s.Left.Round(time.Millisecond))
}
