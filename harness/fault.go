package harness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fault is an inject/heal pair. Its String is an honest label: it says what
// the fault really does, and what it only simulates.
type Fault interface {
	fmt.Stringer
	// Inject applies the fault to env and returns how to undo it.
	Inject(ctx context.Context, env *Env) (Heal, error)
}

// Env is what a fault can act on during a run.
type Env struct {
	Cluster *Cluster
	Clients []*Client
	links   [][]*Link // per client, one link per lock master
}

// Links are the client's network links, one per lock master.
func (e *Env) Links(client int) []*Link { return e.links[client] }

func (e *Env) client(id int) (*Client, error) {
	if id < 0 || id >= len(e.Clients) {
		return nil, fmt.Errorf("no client %d in a run of %d", id, len(e.Clients))
	}
	return e.Clients[id], nil
}

func (e *Env) node(i int) (*Node, error) {
	if i < 0 || i >= len(e.Cluster.masters) {
		return nil, fmt.Errorf("no lock node %d in topology %s", i, e.Cluster.topology)
	}
	return e.Cluster.masters[i], nil
}

// Partition cuts one client off from some lock nodes (all when Nodes is
// empty): its connections are reset and new ones refused (toxiproxy disables
// its links).
type Partition struct {
	Client int
	Nodes  []int // indexes of the lock nodes; empty means all
}

func (f Partition) String() string {
	nodes := "the lock nodes"
	if len(f.Nodes) > 0 {
		nodes = fmt.Sprintf("lock nodes %v", f.Nodes)
	}
	return fmt.Sprintf("partition client %d from %s (connections reset and refused)", f.Client, nodes)
}

// Inject cuts the links.
func (f Partition) Inject(ctx context.Context, env *Env) (Heal, error) {
	if _, err := env.client(f.Client); err != nil {
		return nil, err
	}
	links := env.Links(f.Client)
	if len(f.Nodes) > 0 {
		var some []*Link
		for _, i := range f.Nodes {
			if _, err := env.node(i); err != nil {
				return nil, err
			}
			some = append(some, links[i])
		}
		links = some
	}
	return env.Cluster.network.Cut(ctx, links...)
}

// Latency delays every byte between one client and the lock nodes.
type Latency struct {
	Client int
	Delay  time.Duration
}

func (f Latency) String() string {
	return fmt.Sprintf("add %s latency between client %d and the lock nodes", f.Delay, f.Client)
}

// Inject adds the latency toxics.
func (f Latency) Inject(ctx context.Context, env *Env) (Heal, error) {
	if _, err := env.client(f.Client); err != nil {
		return nil, err
	}
	return env.Cluster.network.Delay(ctx, f.Delay, 0, env.Links(f.Client)...)
}

// BlackHole silently drops one direction of one client's traffic to the lock
// nodes: commands time out and their outcome is unknown.
type BlackHole struct {
	Client    int
	Direction Direction
}

func (f BlackHole) String() string {
	return fmt.Sprintf("black-hole the %s traffic of client %d (bytes dropped, connections kept open)", f.Direction, f.Client)
}

// Inject adds the timeout toxics.
func (f BlackHole) Inject(ctx context.Context, env *Env) (Heal, error) {
	if _, err := env.client(f.Client); err != nil {
		return nil, err
	}
	return env.Cluster.network.BlackHole(ctx, f.Direction, env.Links(f.Client)...)
}

// PauseNode stops a lock node's redis-server with SIGSTOP until the heal
// sends SIGCONT: a real process freeze.
type PauseNode struct{ Node int }

func (f PauseNode) String() string {
	return fmt.Sprintf("pause lock node %d (SIGSTOP, then SIGCONT)", f.Node)
}

// Inject stops the node.
func (f PauseNode) Inject(ctx context.Context, env *Env) (Heal, error) {
	n, err := env.node(f.Node)
	if err != nil {
		return nil, err
	}
	if err := n.Pause(); err != nil {
		return nil, err
	}
	return once(n.Resume), nil
}

// KillNode kills a lock node's redis-server with SIGKILL; the heal restarts
// it on the same port, keeping its on-disk data or not.
type KillNode struct {
	Node     int
	KeepData bool
}

func (f KillNode) String() string {
	keep := "empty"
	if f.KeepData {
		keep = "with its on-disk data"
	}
	return fmt.Sprintf("kill lock node %d (SIGKILL), restart it %s on the same port", f.Node, keep)
}

// Inject kills the node.
func (f KillNode) Inject(ctx context.Context, env *Env) (Heal, error) {
	n, err := env.node(f.Node)
	if err != nil {
		return nil, err
	}
	if err := n.Kill(); err != nil {
		return nil, err
	}
	// The heal may run after ctx ended; the restart gets its own bound.
	return once(func() error {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return n.Restart(rctx, f.KeepData)
	}), nil
}

// ClockJump makes a lock node's clock jump forward By. It is simulated: every
// key's remaining TTL on the node shrinks by By at once, in one script,
// because a real jump (libfaketime) breaks redis-server's start-up here. The
// effect on expiry is the same; the node's own clock readings are not.
type ClockJump struct {
	Node int
	By   time.Duration
}

func (f ClockJump) String() string {
	return fmt.Sprintf("clock jump of %s on lock node %d (simulated: every TTL on it shortened by %s)", f.By, f.Node, f.By)
}

// jumpScript expires what a jump of ARGV[1] ms would expire and shortens the rest.
var jumpScript = redis.NewScript(`
local jump = tonumber(ARGV[1])
for _, k in ipairs(redis.call("KEYS", "*")) do
	local t = redis.call("PTTL", k)
	if t > 0 then
		if t <= jump then
			redis.call("DEL", k)
		else
			redis.call("PEXPIRE", k, t - jump)
		end
	end
end
return 1`)

// Inject shortens the TTLs; a jump is not undone, so the heal does nothing.
func (f ClockJump) Inject(ctx context.Context, env *Env) (Heal, error) {
	n, err := env.node(f.Node)
	if err != nil {
		return nil, err
	}
	if err := jumpScript.Run(ctx, n.Admin(), nil, f.By.Milliseconds()).Err(); err != nil {
		return nil, fmt.Errorf("clock jump on %s: %w", n.Name(), err)
	}
	return once(func() error { return nil }), nil
}

// ClockSkew moves one client's wall clock (Client.Now) by By; the heal puts
// it back. Only the lock code's view of time changes, which is the point.
type ClockSkew struct {
	Client int
	By     time.Duration
}

func (f ClockSkew) String() string {
	return fmt.Sprintf("skew the wall clock of client %d by %s", f.Client, f.By)
}

// Inject moves the clock.
func (f ClockSkew) Inject(ctx context.Context, env *Env) (Heal, error) {
	c, err := env.client(f.Client)
	if err != nil {
		return nil, err
	}
	c.SetSkew(f.By)
	return once(func() error { c.SetSkew(0); return nil }), nil
}

// once makes a heal harmless to call twice.
func once(f func() error) Heal { return Heal(sync.OnceValue(f)) }
