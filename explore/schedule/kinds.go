package schedule

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/cluster"
)

// Kind is one kind of fault explore draws, by the name Config.Faults and
// check explore's -faults give it.
type Kind struct {
	Name string
	// Fault is the kind of fault (fault.Kinds) it is about: the one its
	// story strikes the lock with, which the verdict's family, the
	// comparison's class and the remedy are read from. Several kinds of
	// explore draw one kind of fault at different points, or on different
	// services (kill-node, kill-server and kill-memcached are all
	// kill-node; pause-member is pause-node).
	Fault string
	// With are the other kinds of fault it draws to set its story up (the
	// slow work that keeps a holder working past a killed leader), or in
	// place of Fault on some draws (slow-nodes slows a link where it does
	// not pause a node). TestKindsDrawTheirFaults checks that its draws
	// are of Fault and With, and of all of them.
	With       []string
	About      string             // what it does, in one line
	Topologies []cluster.Topology // the topologies it is drawn on; nil: every one
	// Services are the lock services it can strike; nil: every one. A
	// fault at a lock's command strikes a Redis command or an SQL
	// statement alike (on SQL, AfterTook never strikes: harness/sqlconn.go).
	Services []cluster.Service
}

// DrawnOn reports whether explore draws k on topology t.
func (k Kind) DrawnOn(t cluster.Topology) bool {
	return (k.Topologies == nil || slices.Contains(k.Topologies, t)) && (k.Services == nil || slices.Contains(k.Services, t.Service()))
}

// Kinds lists every kind of fault explore draws, for a user to choose
// from, in the order of the list (allKinds).
func Kinds() []Kind {
	ks := make([]Kind, len(allKinds))
	for i, k := range allKinds {
		ks[i] = k.Kind
	}
	return ks
}

// kind is one kind of fault, how often it is drawn and how.
type kind struct {
	Kind
	weight int
	crash  bool // it crashes a client
	draw   func(d *drawer) Fault
	// words name it in a bug's signature when its name reads poorly there;
	// empty: its name, dashes as spaces. Several kinds are one fault at
	// different points (a pause in the release or in the critical section):
	// the strike that follows tells them apart.
	words string
	// since is the first replay format version that draws it (see
	// ReplayVersion): 1 for the kinds of replays that carried no version.
	since int
}

// Words is how a bug's signature names the kind called name.
func Words(name string) string {
	if name == "" {
		return "fault"
	}
	if i := slices.IndexFunc(allKinds, func(k kind) bool { return k.Name == name }); i >= 0 && allKinds[i].words != "" {
		return allKinds[i].words
	}
	return strings.ReplaceAll(name, "-", " ")
}

var (
	onlyRedlock   = []cluster.Topology{cluster.Redlock}
	onlyRedis     = []cluster.Service{cluster.Redis}
	onlySQL       = []cluster.Service{cluster.MariaDB, cluster.PostgreSQL}
	onlyZooKeeper = []cluster.Service{cluster.ZooKeeper}
	onlyMemcached = []cluster.Service{cluster.Memcached}
	// consensus are the services whose servers elect a leader.
	consensus = []cluster.Service{cluster.Etcd, cluster.ZooKeeper}
)

// ReplayVersion is the format version of the replays explore writes: the
// newest, and the version a Replay of Version 0 means. A replay's version
// fixes which kinds its seed draws from: version N draws the kinds whose
// since is at most N, in the order of allKinds. A new kind changes the
// draw of every seed of the topologies it is drawn on (the weights add up
// to another total, so the same random number falls on another kind, and
// every draw after that is another too), so it comes with a new version:
// replays written before it keep the version they were written with and
// draw from the kinds of their time, as they did then.
//
// Version 1 is every kind below with since: 1; replays written before
// versions existed ("SEED", "SEED:i,j") are of version 1. Version 2 adds
// memcached's kinds, drawn on memcached alone: on the other topologies it
// draws what version 1 draws.
const ReplayVersion = 2

// allKinds is every kind of fault explore draws, in one list whose order
// is part of every replay: the draw walks it in this order, so a kind is
// never moved, removed or given another weight, and a new kind is appended
// at the end with since: ReplayVersion+1, ReplayVersion raised to match
// (several kinds added together share one version). TestKindList checks
// the list's shape; TestRecordedReplays, that recorded replays draw what
// they drew. A kind's draw function is part of the replays too: one that
// draws its parts otherwise redraws them for every version; draw such a
// change as a new kind.
//
// Durations of pauses and delays are drawn either well inside a lease (a
// quarter TTL at most) or well past it (two TTLs at least), never near it:
// near it, whether a correct lock survives is a matter of scheduling, and
// the reference run would not agree with the run it is compared with. A command that errs at once (a cut) is inside;
// one whose reply the client waits for in vain (a dropped reply, a link
// slower than the timeout) costs the client its timeout, five leases.
var allKinds = []kind{
	{Kind: Kind{Name: "crash-acquire", Fault: "crash", About: "a client crashes just after an acquire's command (mostly the one that took the key)"},
		weight: 3, words: "crash", crash: true, draw: (*drawer).crashAcquire, since: 1},
	{Kind: Kind{Name: "crash", Fault: "crash", About: "a client crashes in its critical section, or at a command of its critical section, release or background work"},
		weight: 1, crash: true, draw: (*drawer).crash, since: 1},
	{Kind: Kind{Name: "pause-release", Fault: "pause", About: "a client pauses (stop-the-world) at a release command until another client holds the lock"},
		weight: 3, words: "pause", draw: (*drawer).pauseRelease, since: 1},
	{Kind: Kind{Name: "slow-work", Fault: "slow-work", About: "a critical section works two to three leases longer"},
		weight: 3, draw: (*drawer).slowWork, since: 1},
	{Kind: Kind{Name: "pause-holder", Fault: "pause", About: "a holder pauses (stop-the-world) two to three leases in its critical section"},
		weight: 1, words: "pause", draw: (*drawer).pauseHolder, since: 1},
	{Kind: Kind{Name: "command-pause", Fault: "pause", About: "a client pauses (stop-the-world) at a command of any phase"},
		weight: 1, words: "pause", draw: (*drawer).commandPause, since: 1},
	{Kind: Kind{Name: "command-delay", Fault: "command-delay", About: "a command of any phase is delayed, inside or past a lease"},
		weight: 1, words: "delay", draw: (*drawer).commandDelay, since: 1},
	{Kind: Kind{Name: "drop-reply", Fault: "drop-reply", About: "a command of any phase runs but its reply is lost: the client waits its timeout"},
		weight: 3, words: "lost reply", draw: (*drawer).dropReply, since: 1},
	{Kind: Kind{Name: "drop-release", Fault: "drop-reply", With: []string{"command-delay"}, About: "a release's first command runs but its reply is lost; a release command after it waits until another client acquires"},
		weight: 3, words: "lost reply of release command", draw: (*drawer).dropRelease, since: 1},
	{Kind: Kind{Name: "cut-renewal", Fault: "partition", With: []string{"slow-work"}, About: "while a critical section works past its lease, one background command (a renewal) fails at once: the client is cut off briefly"},
		weight: 2, draw: (*drawer).cutRenewal, since: 1},
	{Kind: Kind{Name: "drop-renewal", Fault: "drop-reply", With: []string{"slow-work"}, About: "while a critical section works past its lease, the reply of one background command (a renewal) is lost"},
		weight: 1, draw: (*drawer).dropRenewal, since: 1},
	{Kind: Kind{Name: "slow-renewal", Fault: "latency", With: []string{"slow-work"}, About: "while a critical section works past its lease, the client's links turn slower than its timeout just before a background command (a renewal)"},
		weight: 1, draw: (*drawer).slowRenewal, since: 1},
	{Kind: Kind{Name: "cut-holder", Fault: "partition", About: "right after an acquire, the holder is cut off from the lock nodes, briefly or past its lease"},
		weight: 1, draw: (*drawer).cutHolder, since: 1},
	{Kind: Kind{Name: "clock-skew", Fault: "clock-skew", About: "a client's wall clock runs ahead (or behind) by several leases"},
		weight: 2, draw: (*drawer).clockSkew, since: 1},
	{Kind: Kind{Name: "partition", Fault: "partition", About: "a client is cut off from the lock nodes (on redlock, from some) at a drawn time"},
		weight: 1, draw: (*drawer).partition, since: 1},
	{Kind: Kind{Name: "latency", Fault: "latency", About: "a client's links get a little latency at a drawn time, an eighth of a lease at most"},
		weight: 1, draw: (*drawer).latency, since: 1},
	{Kind: Kind{Name: "black-hole", Fault: "black-hole", About: "one direction of a client's traffic vanishes at a drawn time"},
		weight: 1, draw: (*drawer).blackHole, since: 1},
	{Kind: Kind{Name: "drop-connection", Fault: "drop-connection", About: "a client's connections to the lock nodes are closed right after an acquire or just before a command of any phase; new ones succeed at once"},
		weight: 1, draw: (*drawer).dropConnection, since: 1},
	{Kind: Kind{Name: "busy-pool", Fault: "busy-pool", About: "another user of a client's SQL pool holds a connection from just before an acquire until its critical section: the acquire and the release run on different connections", Services: onlySQL},
		weight: 2, draw: (*drawer).busyPool, since: 1},
	{Kind: Kind{Name: "kill-connection", Fault: "kill-connection", With: []string{"slow-work"}, About: "the server kills a client's connections right after an acquire or in its critical section (KILL CONNECTION); new ones succeed", Services: onlySQL},
		weight: 2, draw: (*drawer).killConnection, since: 1},
	{Kind: Kind{Name: "pause-node", Fault: "pause-node", About: "a lock node is paused (SIGSTOP) at a drawn time, shorter than Sentinel's down-after", Services: onlyRedis},
		weight: 1, draw: (*drawer).pauseNode, since: 1},
	{Kind: Kind{Name: "failover", Fault: "kill-master", With: []string{"cut-replication", "prefer-replica", "slow-work"}, About: "replication is cut, the master killed while it holds the lock, and Sentinel promotes a replica (sometimes the preferred one, which was cut)", Topologies: []cluster.Topology{cluster.Replicated}},
		weight: 1, draw: (*drawer).failover, since: 1},
	{Kind: Kind{Name: "kill-node", Fault: "kill-node", With: []string{"partition"}, About: "a Redlock node is killed while a client holds the lock and restarted empty (or with its data), at once or after a lease", Topologies: onlyRedlock},
		weight: 2, draw: (*drawer).killNode, since: 1},
	{Kind: Kind{Name: "clock-jump", Fault: "clock-jump", About: "a Redlock node's clock jumps a lease forward while a client holds the lock", Topologies: onlyRedlock},
		weight: 2, draw: (*drawer).clockJump, since: 1},
	{Kind: Kind{Name: "slow-nodes", Fault: "pause-node", With: []string{"latency"}, About: "just after an acquire took the key on one Redlock node, two nodes are paused, or slowed for that client, past a lease", Topologies: onlyRedlock},
		weight: 4, draw: (*drawer).slowNodes, since: 1},
	// On the consensus services (etcd.go): their servers matter by their
	// role, where Redis's node faults name one node by its place.
	{Kind: Kind{Name: "kill-leader", Fault: "kill-leader", With: []string{"slow-work"}, About: "the leader (etcd's or ZooKeeper's) is killed while a client holds the lock and restarted with its data, at once or after a lease; the holder works on a little", Services: consensus},
		weight: 2, draw: (*drawer).killLeader, since: 1},
	{Kind: Kind{Name: "pause-member", Fault: "pause-node", About: "an etcd member or ZooKeeper server is paused (SIGSTOP) at a drawn time, inside or past a lease", Services: consensus},
		weight: 1, draw: (*drawer).pauseMember, since: 1},
	// On ZooKeeper alone (zookeeper.go).
	{Kind: Kind{Name: "kill-server", Fault: "kill-node", About: "a ZooKeeper server, the leader or not, is killed while a client holds the lock and restarted with its data or empty (it then takes a snapshot from the leader), at once or after a lease", Services: onlyZooKeeper},
		weight: 2, draw: (*drawer).killServer, since: 1},
	{Kind: Kind{Name: "clock-jump-server", Fault: "clock-jump", With: []string{"slow-work"}, About: "the wall clock of one ZooKeeper server, or of all three, jumps forward (libfaketime in its JVM; the monotonic clock, which times sessions, untouched) by a lease to ten while a client holds the lock; the holder works on, inside a lease or past it. Not drawn on etcd: a Go server's clock cannot be moved so", Services: onlyZooKeeper},
		weight: 1, draw: (*drawer).clockJumpServer, since: 1},
	// Version 2: memcached (memcached.go).
	{Kind: Kind{Name: "evict", Fault: "evict", With: []string{"slow-work"}, About: "a writer fills the memcached server's memory while a client holds the lock, until the server's LRU evicts the lock's item; the holder works on a little", Services: onlyMemcached},
		weight: 2, draw: (*drawer).evict, since: 2},
	{Kind: Kind{Name: "kill-memcached", Fault: "kill-node", With: []string{"slow-work"}, About: "the memcached server is killed while a client holds the lock and restarted, empty (memcached keeps nothing), at once or after a lease; the holder works on a little", Services: onlyMemcached},
		weight: 2, draw: (*drawer).killMemcached, since: 2},
	// Version 3 and later: append here, with since: ReplayVersion+1.
}
