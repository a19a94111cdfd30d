package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/network"
	"github.com/redis/go-redis/v9"
)

// Fault is an inject/heal pair. Its String is an honest label: it says what
// the fault really does, and what it only simulates. Adding a fault is one
// type with these three methods; the history, the classifier and the
// report read everything else from About.
type Fault interface {
	fmt.Stringer
	// Inject applies the fault to env and returns how to undo it.
	Inject(ctx context.Context, env *Env) (network.Heal, error)
	// About says what the fault is, whom it targets and how it bears on a
	// lock's safety.
	About() About
}

// About is what a fault says of itself.
type About struct {
	// Family names the fault in a verdict's words ("a failover", "a client
	// partition"); empty for a fault that only sets the stage.
	Family string
	// Client is the client it acts on, or -1 when it acts on the system:
	// the history and the report put a client's faults on its row.
	Client int
	// Effect is how the fault, from inject to heal, can bear on a lock's
	// safety; the classifier reads it from the history to tell which
	// overlaps of holders the fault explains.
	Effect history.Effect
	// Remedy is what beats the fault, when a failure it causes is inherent.
	Remedy string
	// Uses are the node operations it asks of the backend, which a backend
	// may do otherwise than a local process (cluster.FaultNoter).
	Uses []cluster.Operation
}

// inject applies f to env. The returned heal undoes it and records the fault
// in the history, from inject to heal, with detail saying what triggered it
// and crux whether it is the fault the scenario is about; scheduled faults
// and failpoint faults both go through here.
func inject(ctx context.Context, env *Env, f Fault, detail string, crux bool) (network.Heal, error) {
	start := env.history.Now()
	heal, err := f.Inject(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("inject %s: %w", f, err)
	}
	return once(func() error {
		err := heal()
		about := f.About()
		env.history.Add(history.Op{Client: about.Client, Kind: history.KindFault, Call: start, Return: env.history.Now(),
			Fault: f.String(), Detail: detail, Effect: about.Effect, Crux: crux})
		if err != nil {
			return fmt.Errorf("heal %s: %w", f, err)
		}
		return nil
	}), nil
}

// Env is what a fault can act on during a run.
type Env struct {
	Cluster *cluster.Cluster
	Clients []*Client
	links   [][]*network.Link // per client, one link per lock master
	history *history.Recorder
}

// Links are the client's network links, one per lock master.
func (e *Env) Links(client int) []*network.Link { return e.links[client] }

func (e *Env) client(id int) (*Client, error) {
	if id < 0 || id >= len(e.Clients) {
		return nil, fmt.Errorf("no client %d in a run of %d", id, len(e.Clients))
	}
	return e.Clients[id], nil
}

func (e *Env) node(i int) (cluster.Node, error) {
	if i < 0 || i >= len(e.Cluster.LockNodes()) {
		return nil, fmt.Errorf("no lock node %d in topology %s", i, e.Cluster.Topology())
	}
	return e.Cluster.LockNodes()[i], nil
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

// About: its effect is a stall: the client's commands fail, its renewals too.
func (f Partition) About() About {
	return About{Family: faultPartition, Client: f.Client, Effect: history.EffectStall, Remedy: fencing}
}

// Inject cuts the links.
func (f Partition) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	links, err := env.linksTo(f, f.Client, f.Nodes)
	if err != nil {
		return nil, err
	}
	return env.Cluster.Network().Cut(ctx, links...)
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
	if c.attached() != nil && e.Cluster.ReplicaSet() != nil {
		c.spoilf("%s cannot reach client %d: a lock program on the replicated topology dials the nodes Sentinel names, not its own links", f, client)
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

// Latency delays every byte between one client and some lock nodes (all
// when Nodes is empty).
type Latency struct {
	Client int
	Delay  time.Duration
	Nodes  []int // indexes of the lock nodes; empty means all
}

func (f Latency) String() string {
	nodes := "the lock nodes"
	if len(f.Nodes) > 0 {
		nodes = fmt.Sprintf("lock nodes %v", f.Nodes)
	}
	return fmt.Sprintf("add %s latency between client %d and %s", f.Delay, f.Client, nodes)
}

// About: its effect is a delay: the client's commands, its renewals too, come late,
// and so do the replies that grant it the lock.
func (f Latency) About() About {
	return About{Family: faultSlowNetwork, Client: f.Client, Effect: history.EffectDelay, Remedy: fencing}
}

// Inject adds the latency toxics.
func (f Latency) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	links, err := env.linksTo(f, f.Client, f.Nodes)
	if err != nil {
		return nil, err
	}
	return env.Cluster.Network().Delay(ctx, f.Delay, 0, links...)
}

// BlackHole silently drops one direction of one client's traffic to the lock
// nodes: commands time out and their outcome is unknown.
type BlackHole struct {
	Client    int
	Direction network.Direction
}

func (f BlackHole) String() string {
	return fmt.Sprintf("black-hole the %s traffic of client %d (bytes dropped, connections kept open)", f.Direction, f.Client)
}

// About: its effect is a stall: the client's commands, its renewals too, time out.
func (f BlackHole) About() About {
	return About{Family: faultSlowNetwork, Client: f.Client, Effect: history.EffectStall, Remedy: fencing}
}

// Inject adds the timeout toxics.
func (f BlackHole) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	links, err := env.linksTo(f, f.Client, nil)
	if err != nil {
		return nil, err
	}
	return env.Cluster.Network().BlackHole(ctx, f.Direction, links...)
}

// PauseNode stops a lock node's redis-server with SIGSTOP until the heal
// sends SIGCONT: a real process freeze.
type PauseNode struct{ Node int }

func (f PauseNode) String() string {
	return fmt.Sprintf("pause lock node %d (SIGSTOP, then SIGCONT)", f.Node)
}

// About: its effect is a stall of every client: none gets an answer from the node,
// and keys keep expiring by the time that passes meanwhile.
func (PauseNode) About() About {
	return About{Family: faultNodePause, Client: -1, Effect: history.EffectStall, Remedy: fencing, Uses: []cluster.Operation{cluster.NodePause}}
}

// Inject stops the node.
func (f PauseNode) Inject(ctx context.Context, env *Env) (network.Heal, error) {
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

// About: its effect is a stall while the node is down: whoever needs it, to renew
// or to release, is held up. The restart that heals it is recorded apart,
// as a loss, at the moment it happens: only from then can another client
// take on that node what the killed node held, and even a restart with its
// data may lose the writes it had not yet fsynced (the fault cannot know
// the node's fsync policy).
func (KillNode) About() About {
	return About{Family: faultNodeRestart, Client: -1, Effect: history.EffectStall, Remedy: "restart a node only after a TTL, or appendfsync always", Uses: []cluster.Operation{cluster.NodeKill}}
}

// restarted labels the record of the restart that heals f, with what the
// node lost.
func (f KillNode) restarted() string {
	if f.KeepData {
		return fmt.Sprintf("lock node %d restarted with its on-disk data (what it had not fsynced is lost)", f.Node)
	}
	return fmt.Sprintf("lock node %d restarted empty (every key it held is lost)", f.Node)
}

// Inject kills the node.
func (f KillNode) Inject(ctx context.Context, env *Env) (network.Heal, error) {
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
		start := env.history.Now()
		if err := n.Restart(rctx, f.KeepData); err != nil {
			return err
		}
		env.history.Add(history.Op{Client: -1, Kind: history.KindFault, Call: start, Return: env.history.Now(),
			Fault: f.restarted(), Effect: history.EffectLoss})
		return nil
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
	return fmt.Sprintf("clock jump of %s on lock node %d (simulated: every TTL on it shortened by %s at once, "+
		"because libfaketime breaks redis-server's start-up here)", f.By, f.Node, f.By)
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

// About: its effect is a loss: the node's keys expire early.
func (ClockJump) About() About {
	return About{Family: faultClockJump, Client: -1, Effect: history.EffectLoss, Remedy: "slewing (not stepping) time sync, or " + fencing}
}

// Inject shortens the TTLs; a jump is not undone, so the heal does nothing.
func (f ClockJump) Inject(ctx context.Context, env *Env) (network.Heal, error) {
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

// About: its effect is a stall: the lock code's view of time is wrong, as when the
// client had stopped for By, so it may renew or give up too late.
func (f ClockSkew) About() About {
	return About{Family: faultClockSkew, Client: f.Client, Effect: history.EffectStall, Remedy: fencing}
}

// Inject moves the clock.
func (f ClockSkew) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	c, err := env.client(f.Client)
	if err != nil {
		return nil, err
	}
	c.SetSkew(f.By)
	return once(func() error { c.SetSkew(0); return nil }), nil
}

// once makes a heal harmless to call twice.
func once(f func() error) network.Heal { return network.Heal(sync.OnceValue(f)) }

// replicaSet is the topology's Sentinel-watched set, or an error naming the
// fault that needs one.
func (e *Env) replicaSet(fault string) (*cluster.ReplicaSet, error) {
	if e.Cluster.ReplicaSet() == nil {
		return nil, fmt.Errorf("%s needs the replicated topology, not %s", fault, e.Cluster.Topology())
	}
	return e.Cluster.ReplicaSet(), nil
}

// CutReplication cuts the replication of some replicas (data-node indexes
// of the replicated topology) from the master: writes stop reaching them,
// as with a slow or broken replica link. A failover ends it early.
type CutReplication struct{ Replicas []int }

func (f CutReplication) String() string {
	return fmt.Sprintf("cut replication to data nodes %v (their link to the master is disabled)", f.Replicas)
}

// About: it only sets the stage: the master still grants and renews; what
// a failover then loses is the failover's.
func (CutReplication) About() About {
	return About{Family: faultFailover, Client: -1, Effect: history.EffectStage, Remedy: failoverRemedy, Uses: []cluster.Operation{cluster.ReplicationCut}}
}

// Inject cuts every named replica's link.
func (f CutReplication) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	rs, err := env.replicaSet("CutReplication")
	if err != nil {
		return nil, err
	}
	var heals []network.Heal
	healAll := func() error {
		var errs []error
		for _, h := range heals {
			errs = append(errs, h())
		}
		return errors.Join(errs...)
	}
	for _, i := range f.Replicas {
		n, err := env.node(i)
		if err == nil {
			var h network.Heal
			if h, err = rs.CutReplication(ctx, n); err == nil {
				heals = append(heals, h)
				continue
			}
		}
		healAll()
		return nil, err
	}
	return once(healAll), nil
}

// PreferReplica makes a data node of the replicated topology Sentinel's
// first choice for promotion (replica-priority 1; others keep 100), as an
// operator does for a replica in the main data centre. Sentinel ranks
// priority before replication offset.
type PreferReplica struct{ Node int }

func (f PreferReplica) String() string {
	return fmt.Sprintf("make data node %d Sentinel's preferred replica (replica-priority 1)", f.Node)
}

// About: it only sets the stage for a failover.
func (PreferReplica) About() About {
	return About{Family: "", Client: -1, Effect: history.EffectStage}
}

// Inject sets the priority; the heal puts back the default.
func (f PreferReplica) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	if _, err := env.replicaSet("PreferReplica"); err != nil {
		return nil, err
	}
	n, err := env.node(f.Node)
	if err != nil {
		return nil, err
	}
	if err := n.Admin().ConfigSet(ctx, "replica-priority", "1").Err(); err != nil {
		return nil, fmt.Errorf("prefer %s: %w", n.Name(), err)
	}
	return once(func() error {
		hctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return n.Admin().ConfigSet(hctx, "replica-priority", "100").Err()
	}), nil
}

// KillMaster kills the current master of the replicated topology, and the
// data nodes in Also, with SIGKILL, then waits until Sentinel has promoted a
// replica (observed, not slept for). The heal restarts the killed nodes
// empty; Sentinel turns them into replicas of the new master.
type KillMaster struct{ Also []int }

func (f KillMaster) String() string {
	also := ""
	if len(f.Also) > 0 {
		also = fmt.Sprintf(" and data nodes %v", f.Also)
	}
	return fmt.Sprintf("kill the master%s (SIGKILL), wait for Sentinel's failover; restart them empty as replicas", also)
}

// About: its effect is a loss: the promoted replica may lack the lock's key.
func (KillMaster) About() About {
	return About{Family: faultFailover, Client: -1, Effect: history.EffectLoss, Remedy: failoverRemedy, Uses: []cluster.Operation{cluster.NodeKill}}
}

// Inject kills and waits for the promotion.
func (f KillMaster) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	rs, err := env.replicaSet("KillMaster")
	if err != nil {
		return nil, err
	}
	master, err := rs.Master(ctx)
	if err != nil {
		return nil, err
	}
	killed := []cluster.Node{master}
	for _, i := range f.Also {
		n, err := env.node(i)
		if err != nil {
			return nil, err
		}
		killed = append(killed, n)
	}
	restart := once(func() error {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var errs []error
		for _, n := range killed {
			errs = append(errs, n.Restart(rctx, false))
		}
		return errors.Join(errs...)
	})
	for _, n := range killed {
		if err := n.Kill(); err != nil {
			restart()
			return nil, err
		}
	}
	start := env.history.Now()
	to, took, err := rs.AwaitFailover(ctx, master)
	if err != nil {
		restart()
		return nil, fmt.Errorf("await failover: %w", err)
	}
	env.history.Add(history.Op{Client: -1, Kind: history.KindFault, Call: start, Return: env.history.Now(), Fault: history.FaultFailover,
		Effect: history.EffectLoss, Detail: fmt.Sprintf("Sentinel promoted %s in place of %s after %s", to.Name(), master.Name(), took.Round(time.Millisecond))})
	return restart, nil
}
