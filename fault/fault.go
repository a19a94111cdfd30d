// Package fault is every fault locklab injects into a run: what each one
// really does and what it only simulates (its String), whom it strikes,
// how it bears on a lock's safety and what beats it (its Kind, from one
// list: Kinds). The runner, the classifier, the report, explore and the
// backends all read faults from here, so adding one is a file and a line.
package fault

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
)

// Fault is an inject/heal pair. Its String is an honest label: it says what
// the fault really does, and what it only simulates.
type Fault interface {
	fmt.Stringer
	// Inject applies the fault to env and returns how to undo it.
	Inject(ctx context.Context, env *Env) (network.Heal, error)
	// About says what kind of fault it is and whom it strikes.
	About() About
}

// About is what a fault says of itself: its kind, the client it acts on,
// or -1 when it acts on the system (the history and the report put a
// client's faults on its row), and what exactly it strikes. The history
// records all three as data, so that no reader parses a label.
type About struct {
	Kind
	Client int
	// Struck is what this fault strikes: the kind of thing (more exact
	// than its Kind's Target: a client's connections rather than its
	// links) and the lock nodes it touches.
	Struck history.Target
}

// Apply injects f into env. The returned heal undoes it and records the
// fault in the history, from inject to heal, as rec with the fault's
// label, kind, target and effect filled in: rec's Detail says what
// triggered it, its Crux whether it is the fault the scenario is about,
// and for a failpoint's fault its Failpoint, Phase and Command where it
// struck. Scheduled faults and failpoint faults both go through here.
func Apply(ctx context.Context, env *Env, f Fault, rec history.Op) (network.Heal, error) {
	start := env.history.Now()
	seen := &observed{}
	heal, err := f.Inject(context.WithValue(ctx, observedKey{}, seen), env)
	if err != nil {
		return nil, fmt.Errorf("inject %s: %w", f, err)
	}
	about := f.About()
	op := rec
	op.Client, op.Kind, op.Call = about.Client, history.KindFault, start
	op.Fault, op.FaultKind, op.Effect = f.String(), about.Name, about.Effect
	if seen.effect != "" {
		op.Effect = seen.effect
		op.Detail = strings.TrimPrefix(op.Detail+"; "+seen.why, "; ")
	}
	op.Target = env.target(about.Struck)
	env.history.Begin(op)
	return once(func() error {
		err := heal()
		op.Return = env.history.Now()
		env.history.Add(op)
		if err != nil {
			return fmt.Errorf("heal %s: %w", f, err)
		}
		return nil
	}), nil
}

// observed is what a fault's Inject saw it do to the lock, when that, not
// its kind, says its effect (observe).
type observed struct {
	effect history.Effect
	why    string
}

type observedKey struct{}

// observe records, from within a fault's Inject through Apply's ctx, the
// effect the servers showed the fault had on the lock, and why, in place of
// its kind's: a killed connection is a loss only where the server freed the
// lock with it.
func observe(ctx context.Context, effect history.Effect, why string) {
	if seen, ok := ctx.Value(observedKey{}).(*observed); ok {
		seen.effect, seen.why = effect, why
	}
}

// Client is what a fault can do to one client of a run.
type Client interface {
	// SetSkew moves the client's wall clock by d from the real one.
	SetSkew(d time.Duration)
	// Program reports whether the lock is a program of its own, which
	// dials what it is told rather than the client's links.
	Program() bool
	// Spoil marks the run as not having happened as written, saying why.
	Spoil(why string)
	// SQLConnections are the server-side ids of the connections the
	// client opened to the lock table's server (SQL topology).
	SQLConnections() []int64
}

// Env is what a fault can act on during a run: the cluster, the clients
// and their links, and the history faults are recorded in.
type Env struct {
	Cluster *cluster.Cluster
	// Key is the lock's key on the servers, as the run knows it when a
	// fault strikes (a program's own, once its requests showed it), whose
	// state a fault can read to tell what it did to the lock; nil reads
	// as "lock".
	Key     func() string
	clients []Client
	links   [][]*network.Link // per client, one link per lock node
	history *history.Recorder
}

// NewEnv is the environment of a run on cl that records into h.
func NewEnv(cl *cluster.Cluster, h *history.Recorder) *Env {
	return &Env{Cluster: cl, history: h}
}

// AddClient adds the next client, whose links to the lock nodes are links.
func (e *Env) AddClient(c Client, links []*network.Link) {
	e.clients = append(e.clients, c)
	e.links = append(e.links, links)
}

// Links are the client's network links, one per lock node.
func (e *Env) Links(client int) []*network.Link { return e.links[client] }

func (e *Env) client(id int) (Client, error) {
	if id < 0 || id >= len(e.clients) {
		return nil, fmt.Errorf("no client %d in a run of %d", id, len(e.clients))
	}
	return e.clients[id], nil
}

func (e *Env) node(i int) (cluster.Node, error) {
	if i < 0 || i >= len(e.Cluster.LockNodes()) {
		return nil, fmt.Errorf("no lock node %d in topology %s", i, e.Cluster.Topology())
	}
	return e.Cluster.LockNodes()[i], nil
}

// linksTo is client's links to the given lock nodes, or to all of them,
// for fault f. It is none, and the run is spoiled, when a fault on them
// cannot reach the client: a lock program on the replicated topology dials
// the data nodes at the addresses Sentinel gives it, not through its links.
func (e *Env) linksTo(f Fault, client int, nodes []int) ([]*network.Link, error) {
	c, err := e.client(client)
	if err != nil {
		return nil, err
	}
	if _, replicated := e.Cluster.Deployment().(cluster.Replicas); c.Program() && replicated {
		c.Spoil(fmt.Sprintf("%s cannot reach client %d: a lock program on the replicated topology dials the nodes Sentinel names, not its own links", f, client))
		return nil, nil
	}
	links := e.Links(client)
	if len(nodes) == 0 {
		return links, nil
	}
	var some []*network.Link
	for _, i := range nodes {
		if _, err := e.node(i); err != nil {
			return nil, err
		}
		some = append(some, links[i])
	}
	return some, nil
}

// target is t as the history records it: a fault on links, connections
// or nodes that names no lock node, nor one by its role, reaches every
// one of them, and the record says which.
func (e *Env) target(t history.Target) *history.Target {
	t.Nodes = slices.Clone(t.Nodes)
	if t.Type != history.TargetClient && t.Role == "" && len(t.Nodes) == 0 && e.Cluster != nil {
		for i := range e.Cluster.LockNodes() {
			t.Nodes = append(t.Nodes, i)
		}
	}
	return &t
}

// replicaSet is the topology's master and replicas, or an error naming the
// fault that needs them.
func (e *Env) replicaSet(fault string) (cluster.Replicas, error) {
	rs, ok := e.Cluster.Deployment().(cluster.Replicas)
	if !ok {
		return nil, fmt.Errorf("%s needs the replicated topology, not %s", fault, e.Cluster.Topology())
	}
	return rs, nil
}

// restartCap bounds a heal's restart of a killed node, from its spawn
// until it serves again: a ZooKeeper server's JVM rejoining its ensemble
// took more than 10 s on a loaded 2-core machine, where a few seconds is
// usual. The cap only decides when a restart counts as failed.
const restartCap = 30 * time.Second

// once makes a heal harmless to call twice.
func once(f func() error) network.Heal { return network.Heal(sync.OnceValue(f)) }
