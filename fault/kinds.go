package fault

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
)

// Kind is one kind of fault: its name, what it strikes and how it bears on
// a lock's safety. Every fault type and every action a failpoint takes is
// of one kind in Kinds.
type Kind struct {
	// Name names the kind in the report, explore's -faults and the docs/ pages
	// ("partition").
	Name string
	// Family names it in a verdict's words ("a client partition"); kinds
	// that fail a lock the same way share one. Empty for a kind that only
	// sets the stage.
	Family string
	// Target is what it strikes.
	Target Target
	// Effect is how, from inject to heal, it can bear on a lock's safety;
	// the classifier reads it from the history to tell which overlaps of
	// holders it explains. Only EffectLoss can lose a lock's state.
	Effect history.Effect
	// Remedy is what beats it, when a failure it causes is inherent.
	Remedy string
	// Uses are the node operations it asks of the backend, which a backend
	// may do otherwise than a local process (cluster.FaultNoter).
	Uses []cluster.Operation
	// Class is the comparison's column it falls in; every kind with a
	// Family has one, and "" is for a kind that only sets the stage.
	Class Class
	// Services are the lock services it can strike, where it needs what
	// only they have (SQL connections, a leader, an evicting cache); nil:
	// every one. Explore draws it on none other (explore's
	// TestKindsWhereTheyStrike checks its draws and the catalogue's
	// scenarios against it).
	Services []cluster.Service
	// Topologies narrow Services further where it needs one topology's
	// nodes (the replicated topology's Sentinel); nil: every topology of
	// its services.
	Topologies []cluster.Topology
}

// Target is what a kind of fault strikes: the history's word for it.
type Target = history.TargetType

// Targets of kinds.
const (
	TargetClient = history.TargetClient // a client: its process, its clock, its work
	TargetLink   = history.TargetLink   // a network path: a client's to the lock nodes, a replica's to its master
	TargetNode   = history.TargetNode   // a lock node's server
)

// Remedies several kinds share.
const (
	fencing        = "fencing tokens checked by the resource"
	failoverRemedy = "WAIT narrows the window (failover-wait shows its limit); Redlock or " + fencing + " close it"
)

// Kinds lists every kind of fault, the one that best names a failure
// first: when a scenario has several, the classifier names the first
// family (a failover over the pause that times it, a node restart over the
// partition that sets it up). Adding a fault is a file with its type and
// one line here.
func Kinds() []Kind {
	// Where kinds strike, when not everywhere; fresh on every call, as the
	// list is.
	var (
		replicated = []cluster.Topology{cluster.Replicated}
		redis      = []cluster.Service{cluster.Redis}
		sql        = []cluster.Service{cluster.MariaDB, cluster.PostgreSQL}
		consensus  = []cluster.Service{cluster.Etcd, cluster.ZooKeeper}
		memcached  = []cluster.Service{cluster.Memcached}
	)
	return []Kind{
		{Name: "kill-master", Family: "a failover", Target: TargetNode, Effect: history.EffectLoss, Remedy: failoverRemedy, Uses: []cluster.Operation{cluster.NodeKill},
			Class: ClassFailover, Services: redis, Topologies: replicated},
		{Name: "cut-replication", Family: "a failover", Target: TargetLink, Effect: history.EffectStage, Remedy: failoverRemedy, Uses: []cluster.Operation{cluster.ReplicationCut},
			Class: ClassFailover, Services: redis, Topologies: replicated},
		{Name: "kill-node", Family: "a restart of a lock node", Target: TargetNode, Effect: history.EffectStall, Remedy: "restart a node only after a TTL, or appendfsync always", Uses: []cluster.Operation{cluster.NodeKill},
			Class: ClassFailover},
		// A ZooKeeper server's clock, an SQL server's or a memcached's
		// jumps by libfaketime (ClockJumpServer); an etcd member's cannot be
		// moved so.
		{Name: "clock-jump", Family: "a clock jump on a lock node", Target: TargetNode, Effect: history.EffectLoss, Remedy: "slewing (not stepping) time sync, or " + fencing,
			Class: ClassClockJump, Services: []cluster.Service{cluster.Redis, cluster.ZooKeeper, cluster.MariaDB, cluster.PostgreSQL, cluster.Memcached}},
		// An evicted lock is a lock the node forgot, as a restart that
		// keeps nothing forgets it: the failover column's.
		{Name: "evict", Family: "an eviction of the lock's item", Target: TargetNode, Effect: history.EffectLoss,
			Remedy: "a lock service that does not evict (memcached -M refuses writes instead), or " + fencing, Class: ClassFailover, Services: memcached},
		{Name: "kill-connection", Family: "a killed connection", Target: TargetLink, Effect: history.EffectLoss,
			Remedy: "the protected write in the lock's own transaction, which dies with the connection, or " + fencing, Class: ClassCutOff, Services: sql},
		// A paused node answers late, as a slow network does (the holder is
		// not the one stopped): the lost-reply column's.
		{Name: "pause-node", Family: "a pause of a lock node", Target: TargetNode, Effect: history.EffectStall, Remedy: fencing, Uses: []cluster.Operation{cluster.NodePause},
			Class: ClassLostReply},
		{Name: "pause", Family: "a client pause", Target: TargetClient, Effect: history.EffectDelay, Remedy: fencing, Class: ClassPause},
		{Name: "partition", Family: "a client partition", Target: TargetLink, Effect: history.EffectStall, Remedy: fencing, Class: ClassCutOff},
		// A slow network makes a reply come late or never: to the lock,
		// a lost reply.
		{Name: "latency", Family: "a slow network", Target: TargetLink, Effect: history.EffectDelay, Remedy: fencing, Class: ClassLostReply},
		{Name: "black-hole", Family: "a slow network", Target: TargetLink, Effect: history.EffectStall, Remedy: fencing, Class: ClassLostReply},
		{Name: "command-delay", Family: "a slow network", Target: TargetLink, Effect: history.EffectDelay, Remedy: fencing, Class: ClassLostReply},
		{Name: "drop-reply", Family: "a lost reply", Target: TargetLink, Effect: history.EffectStall, Remedy: fencing, Class: ClassLostReply},
		{Name: "drop-connection", Family: "a dropped connection", Target: TargetLink, Effect: history.EffectStall, Remedy: fencing, Class: ClassCutOff},
		// A skewed client clock is the holder's clock jumping.
		{Name: "clock-skew", Family: "a skewed client clock", Target: TargetClient, Effect: history.EffectStall, Remedy: fencing, Class: ClassClockJump},
		// A crashed holder stops past its lease for good; slow work runs
		// on past it: to the lock, both are a holder that stopped renewing.
		{Name: "crash", Family: "a client crash", Target: TargetClient, Effect: history.EffectStall, Remedy: fencing, Class: ClassPause},
		{Name: "slow-work", Family: "slow work", Target: TargetClient, Effect: history.EffectWork, Remedy: "a watchdog that renews the lease, and " + fencing, Class: ClassPause},
		{Name: "kill-leader", Family: "a restart of a lock node", Target: TargetNode, Effect: history.EffectStall, Remedy: "Raft: a majority keeps every committed write", Uses: []cluster.Operation{cluster.NodeKill},
			Class: ClassFailover, Services: consensus},
		// Stage kinds: busy-pool is what the small-pool column is about,
		// another user of the client's pool; prefer-replica only picks the
		// replica a failover promotes.
		{Name: "busy-pool", Target: TargetClient, Effect: history.EffectStage, Class: ClassPool, Services: sql},
		{Name: "prefer-replica", Target: TargetNode, Effect: history.EffectStage, Services: redis, Topologies: replicated},
	}
}

// Named is the kind called name in Kinds. A name not there is a bug in
// the fault that asks for it, so Named panics, and the test of every
// fault's About finds it.
func Named(name string) Kind {
	kinds := Kinds()
	if i := slices.IndexFunc(kinds, func(k Kind) bool { return k.Name == name }); i >= 0 {
		return kinds[i]
	}
	panic(fmt.Sprintf("fault: no kind %q in Kinds", name))
}

// Families lists the families of Kinds in its order, the one that best
// names a failure first, each once.
func Families() []string {
	var families []string
	for _, k := range Kinds() {
		if k.Family != "" && !slices.Contains(families, k.Family) {
			families = append(families, k.Family)
		}
	}
	return families
}

// onClient is the About of a fault of the kind called name that strikes
// client itself: its process, its clock.
func onClient(name string, client int) About {
	return About{Kind: Named(name), Client: client, Struck: history.Target{Type: history.TargetClient}}
}

// onLinks is the About of a fault of the kind called name that strikes
// client's links to the lock nodes nodes (all of them when none).
func onLinks(name string, client int, nodes []int) About {
	return About{Kind: Named(name), Client: client, Struck: history.Target{Type: history.TargetLink, Nodes: nodes}}
}

// onConnections is the About of a fault of the kind called name that
// closes client's open connections.
func onConnections(name string, client int) About {
	return About{Kind: Named(name), Client: client, Struck: history.Target{Type: history.TargetConnection}}
}

// onNodes is the About of a fault of the kind called name that strikes the
// lock nodes nodes; it acts on the system.
func onNodes(name string, nodes ...int) About {
	return About{Kind: Named(name), Client: -1, Struck: history.Target{Type: history.TargetNode, Nodes: nodes}}
}

// StrikesOn reports whether a fault of kind k can strike a lock on
// topology t: whether t is among its Services and Topologies, when it
// names some.
func (k Kind) StrikesOn(t cluster.Topology) bool {
	return (k.Services == nil || slices.Contains(k.Services, t.Service())) &&
		(k.Topologies == nil || slices.Contains(k.Topologies, t))
}

// Where says, in words, the topologies k strikes on: "every topology", or
// the services and topologies it is limited to.
func (k Kind) Where() string {
	var parts []string
	if k.Services != nil {
		parts = append(parts, fmt.Sprintf("services %v", k.Services))
	}
	if k.Topologies != nil {
		parts = append(parts, fmt.Sprintf("topologies %v", k.Topologies))
	}
	if len(parts) == 0 {
		return "every topology"
	}
	return "only " + strings.Join(parts, " and ")
}

// SparesServers reports whether a fault of k leaves every server as it
// was, so that a warm deployment may serve the next run once the lock's
// state is reset (cluster.Pool): it strikes a client (its process, clock,
// work or commands) or a client's link or connection, and asks the
// backend for no node operation: never a server's process, clock or data,
// nor a path between servers (cut-replication's ReplicationCut).
func (k Kind) SparesServers() bool {
	return (k.Target == TargetClient || k.Target == TargetLink) && len(k.Uses) == 0
}

// Spares reports whether the kind named name spares every server
// (Kind.SparesServers); a name of no kind does not.
func Spares(name string) bool {
	for _, k := range Kinds() {
		if k.Name == name {
			return k.SparesServers()
		}
	}
	return false
}
