// Package sentinel is the replicated Redis topology: a master, its
// replicas and the Sentinels that watch them (ReplicaSet), started on any
// backend through its RunSession, and the replication faults that strike
// it.
package sentinel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/network"
	"github.com/redis/go-redis/v9"
)

// The replicated topology is one master, two replicas and three Sentinels on
// 127.0.0.1.
//
// How replication faults reach a single replica. Sentinel insists that every
// replica replicates from the very address it knows the master by: a replica
// started with --replicaof pointing at a proxy in front of the master is
// pointed straight back at the master by Sentinel at its first INFO
// (+fix-slave-config), and after a failover Sentinel tells each replica the
// new master's real address. All replicas of one master therefore dial the
// same address, and a proxy on that address cannot cut one replica alone.
// So replication runs direct while no fault is on, and a replication fault
// detours the replica: the harness points it (REPLICAOF) at a link of its own
// whose upstream is the current master, and faults that link. The heal points
// the replica back at the master. There is one link per ordered pair of data
// nodes, so this works whichever node is master, before and after failovers.
//
// Sentinel tolerates a detour for its failover timeout (sentinelFailoverTimeout)
// after it notices it; past that, while the master is up, it re-points the
// replica at the master itself, which ends the fault early, and the heal
// reports it. A failover also ends the detour, rightly: the replica then
// follows the new master, and the fault was on the path to the old one.
//
// A cluster.Networked backend (containers) needs no detour: replication and Sentinel
// run on its network, by name, and CutReplication cuts the network path of
// the one replica there (see cluster/docker), which Sentinel has no way to undo.
// That network has no delay, so DelayReplication needs the local backend.

// MasterName is the name the Sentinels know the master by.
const MasterName = "locklab"

const (
	replicatedReplicas = 2
	sentinelCount      = 3
	sentinelQuorum     = 2 // a majority of three, so a lone Sentinel can neither declare the master down nor fail it over

	// Sentinel declares the master down after this silence (down-after-milliseconds).
	sentinelDownAfter = 1500 * time.Millisecond
	// The failover timeout bounds each failover step, spaces out retries of a
	// failed failover (twice this), and is how long Sentinel tolerates a
	// replica replicating from an address other than the master's. A successful
	// failover never waits for it.
	sentinelFailoverTimeout = 10 * time.Second
	// How often Sentinels ping, ask each other, publish hellos and read INFO.
	// Not lower: during a failover Sentinel reads a replica's INFO only once a
	// second but wants it fresher than five ping periods, so a shorter period
	// leaves no replica good enough to promote and the failover aborts.
	sentinelPeriod = 300 * time.Millisecond
	// While the topology starts, and no failover can, Sentinels read INFO
	// and publish hellos this often, so that they agree on it at once.
	sentinelLearnPeriod = 50 * time.Millisecond
	// How long a Sentinel that saw its own timer stall stays passive (TILT); the default is 30 s.
	sentinelTiltPeriod = time.Second

	replicatedReadyCap = 15 * time.Second
	readyWaitTimeout   = 20 * time.Millisecond  // of each WAIT by which the start asks whether the replicas acknowledge
	readyNudgeEvery    = 250 * time.Millisecond // at most, a replica that does not is nudged
	failoverCap        = 30 * time.Second
	sentinelAskTimeout = 250 * time.Millisecond
	repointTimeout     = 5 * time.Second
)

// Node is a node that runs redis-server, a data node or a Sentinel, as
// every backend's RunSession.StartNode starts it.
type Node interface {
	cluster.Node
	// Admin is a direct client, past any link, for locklab's own use.
	Admin() *redis.Client
}

// StartNode starts one redis-server on run as cfg says, and returns once it
// answers.
func StartNode(ctx context.Context, run cluster.RunSession, cfg cluster.NodeConfig) (Node, error) {
	n, err := run.StartNode(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rn, ok := n.(Node)
	if !ok {
		n.Stop()
		return nil, fmt.Errorf("the %s backend started %s as no redis-server it can reach (no Admin)", run.Name(), cfg.Name)
	}
	return rn, nil
}

// StartNodes starts a node for each of cfgs at once, since each start
// mostly waits for its server to answer. It returns them in cfgs' order;
// after an error, those that did not start are nil.
func StartNodes(ctx context.Context, run cluster.RunSession, cfgs []cluster.NodeConfig) ([]Node, error) {
	nodes := make([]Node, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], errs[i] = StartNode(ctx, run, cfg)
		}()
	}
	wg.Wait()
	return nodes, errors.Join(errs...)
}

// ReplicaSet is a master, its replicas and the Sentinels that watch them.
// Its methods may be called from several goroutines.
type ReplicaSet struct {
	proxy     *network.Proxy
	net       cluster.Networked // nil for local processes, which replicate on 127.0.0.1
	nodes     []Node            // the data nodes: the first master, then the replicas
	sentinels []Node
	links     map[replPair]*network.Link // the detour of each replica towards each possible master

	// mu is held while a replication fault is applied or healed, so that
	// faults on one replica take turns; it guards detours and closed.
	mu      sync.Mutex
	detours map[*network.Link]int // replication faults now holding each link's detour
	closed  bool
}

// replPair names the replication path from master to replica.
type replPair struct{ replica, master Node }

// StartReplicaSet starts the data nodes and the Sentinels as Dir/n1…n3 and
// Dir/s1…s3, and returns once both replicas are in sync and every Sentinel
// sees the master, both replicas and the two other Sentinels. The run, a
// backend's cluster.RunSession, starts the servers; the detour links are made in
// proxy, which the caller closes after Close.
func StartReplicaSet(ctx context.Context, run cluster.RunSession, dir string, proxy *network.Proxy) (_ *ReplicaSet, err error) {
	if proxy == nil {
		return nil, errors.New("start replicated: no network")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("start replicated: %w", err)
	}
	r := &ReplicaSet{proxy: proxy, links: make(map[replPair]*network.Link), detours: make(map[*network.Link]int)}
	r.net, _ = run.(cluster.Networked)
	defer func() {
		if err != nil {
			err = errors.Join(err, r.Close())
		}
	}()

	var peers []string
	if r.net != nil {
		for i := range replicatedReplicas + 1 {
			peers = append(peers, fmt.Sprintf("n%d", i+1))
		}
	}
	// The replicas and the Sentinels start once the master answers: a replica
	// that finds no master dials again only a second later.
	var master Node
	var masterErr error
	masterUp := make(chan struct{})
	startMaster := func() {
		defer close(masterUp)
		master, masterErr = StartNode(ctx, run, cluster.NodeConfig{Name: "n1", Dir: dir, Args: r.dataNodeArgs("n1"), Peers: peers})
	}
	awaitMaster := func(ctx context.Context) error {
		select {
		case <-masterUp:
			if masterErr != nil {
				return errors.New("its master did not start")
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var host, port string
	if r.net != nil {
		// On a network of names, every address is known before any server
		// runs: all six nodes start at once (a container takes most of a
		// start), and the followers' servers wait for the master.
		if host, port, err = net.SplitHostPort(r.net.PeerAddr("n1")); err != nil {
			return nil, fmt.Errorf("start replicated: %w", err)
		}
		go startMaster()
	} else {
		// A local master's port is known once it runs.
		startMaster()
		if masterErr != nil {
			return nil, fmt.Errorf("start replicated: %w", masterErr)
		}
		r.nodes = append(r.nodes, master)
		if host, port, err = net.SplitHostPort(master.Addr()); err != nil {
			return nil, fmt.Errorf("start replicated: %w", err)
		}
	}

	var followers []cluster.NodeConfig
	for i := range replicatedReplicas {
		name := fmt.Sprintf("n%d", i+2)
		args := append(r.dataNodeArgs(name), "--replicaof", host, port)
		followers = append(followers, cluster.NodeConfig{Name: name, Dir: dir, Args: args, Peers: peers, After: awaitMaster})
	}
	conf := r.sentinelConf(host, port)
	for i := range sentinelCount {
		followers = append(followers, cluster.NodeConfig{Name: fmt.Sprintf("s%d", i+1), Dir: dir, Sentinel: conf, After: awaitMaster})
	}
	started, err := StartNodes(ctx, run, followers)
	if <-masterUp; r.net != nil {
		r.nodes = append(r.nodes, master)
	}
	r.nodes = append(r.nodes, started[:replicatedReplicas]...)
	r.sentinels = started[replicatedReplicas:]
	if masterErr != nil {
		// The followers' errors only say they waited for it.
		return nil, fmt.Errorf("start replicated: %w", masterErr)
	}
	if err != nil {
		return nil, fmt.Errorf("start replicated: %w", err)
	}
	if err := r.makeDetours(ctx); err != nil {
		return nil, fmt.Errorf("start replicated: %w", err)
	}
	if err := r.tuneSentinels(ctx, sentinelLearnPeriod); err != nil {
		return nil, fmt.Errorf("start replicated: %w", err)
	}
	if err := r.awaitReady(ctx); err != nil {
		return nil, fmt.Errorf("start replicated: %w", err)
	}
	if err := r.tuneSentinels(ctx, sentinelPeriod); err != nil {
		return nil, fmt.Errorf("start replicated: %w", err)
	}
	return r, nil
}

// sentinelConf is the Sentinels' configuration, the master at host:port.
func (r *ReplicaSet) sentinelConf(host, port string) string {
	var names []string
	if r.net != nil {
		// Before the monitor line, which names the master by name.
		names = []string{"sentinel resolve-hostnames yes", "sentinel announce-hostnames yes"}
	}
	return strings.Join(append(names,
		fmt.Sprintf("sentinel monitor %s %s %s %d", MasterName, host, port, sentinelQuorum),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", MasterName, sentinelDownAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", MasterName, sentinelFailoverTimeout.Milliseconds()),
		// One replica at a time resyncs with a new master: the other keeps serving.
		fmt.Sprintf("sentinel parallel-syncs %s 1", MasterName),
	), "\n")
}

// makeDetours makes the detour links, one from each data node to each
// other, through which replication runs on local processes; a cluster.Networked
// backend cuts replication without them.
func (r *ReplicaSet) makeDetours(ctx context.Context) error {
	if r.net != nil {
		return nil
	}
	for _, replica := range r.nodes {
		for _, m := range r.nodes {
			if m == replica {
				continue
			}
			l, err := r.proxy.Link(ctx, "repl-"+replica.Name()+"-"+m.Name(), m.Addr())
			if err != nil {
				return err
			}
			r.links[replPair{replica, m}] = l
		}
	}
	return nil
}

// tuneSentinels tunes every Sentinel, learning every learn (tuneSentinel).
func (r *ReplicaSet) tuneSentinels(ctx context.Context, learn time.Duration) error {
	for _, s := range r.sentinels {
		if err := tuneSentinel(ctx, s, learn); err != nil {
			return err
		}
	}
	return nil
}

// dataNodeArgs returns the redis-server arguments of the master and the
// replicas; name is the node's.
func (r *ReplicaSet) dataNodeArgs(name string) []string {
	announce := "127.0.0.1"
	if r.net != nil {
		announce = name
	}
	return []string{
		// Otherwise the master waits 5 s for more replicas before each full sync.
		"--repl-diskless-sync-delay", "0",
		// The address the master lists a replica under, which is where Sentinel
		// looks for it and what it hands out once the replica is promoted.
		"--replica-announce-ip", announce,
	}
}

// peerAddr is the address by which the other servers reach n.
func (r *ReplicaSet) peerAddr(n Node) string {
	if r.net != nil {
		return r.net.PeerAddr(n.Name())
	}
	return n.Addr()
}

// tuneSentinel shortens the Sentinel's timers, which the config file cannot
// set, from their production values (seconds) to sentinelPeriod, so that a
// failover takes seconds. It reads INFO and publishes its hellos every
// learn, by which it learns of the replicas and the other Sentinels.
func tuneSentinel(ctx context.Context, s Node, learn time.Duration) error {
	period := strconv.FormatInt(sentinelPeriod.Milliseconds(), 10)
	learnPeriod := strconv.FormatInt(learn.Milliseconds(), 10)
	// Only options this redis-server knows: for an unknown one, redis 7.0
	// replies with an error and then OK, which would desynchronise the connection.
	err := s.Admin().Do(ctx, "SENTINEL", "DEBUG",
		"ping-period", period, "ask-period", period, "publish-period", learnPeriod, "info-period", learnPeriod,
		"tilt-period", strconv.FormatInt(sentinelTiltPeriod.Milliseconds(), 10)).Err()
	if err != nil {
		return fmt.Errorf("tune sentinel %s (SENTINEL DEBUG needs redis 7.0 or newer): %w", s.Name(), err)
	}
	return nil
}

// awaitReady polls until both replicas are in sync and every Sentinel sees the
// whole topology, so that a failover can start at once.
func (r *ReplicaSet) awaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, replicatedReadyCap)
	defer cancel()
	nudged := make(map[Node]time.Time)
	return cluster.PollUntil(ctx, "await replicas and sentinels", func(ctx context.Context) (string, error) {
		for _, n := range r.nodes[1:] {
			status, err := infoField(ctx, n, "replication", "master_link_status")
			if err != nil {
				return err.Error(), nil
			}
			if status != "up" {
				return fmt.Sprintf("replica %s: master_link_status %q", n.Name(), status), nil
			}
		}
		// Both replicas must also acknowledge a write, as a lock that WAITs
		// wants. Just after a diskless sync, redis 7.0 may list a replica
		// online yet send it nothing until the replica's next
		// acknowledgement, a second later (seen here in most starts: the
		// replica at offset 0, the master at 908). Such a replica is
		// nudged: its master connection is closed, and it dials again at
		// once and continues from the backlog.
		pipe := r.nodes[0].Admin().Pipeline()
		pipe.Publish(ctx, "locklab:ready", "")
		info := pipe.Info(ctx, "replication")
		acked := pipe.Do(ctx, "WAIT", replicatedReplicas, readyWaitTimeout.Milliseconds())
		if _, err := pipe.Exec(ctx); err != nil {
			return err.Error(), nil
		}
		if acks, _ := acked.Int(); acks < replicatedReplicas {
			written, _ := strconv.ParseInt(infoValue(info.Val(), "master_repl_offset"), 10, 64)
			for _, n := range r.nodes[1:] {
				got, err := infoField(ctx, n, "replication", "slave_repl_offset")
				if err != nil {
					return err.Error(), nil
				}
				if offset, _ := strconv.ParseInt(got, 10, 64); offset < written && time.Since(nudged[n]) > readyNudgeEvery {
					nudged[n] = time.Now()
					if err := n.Admin().Do(ctx, "CLIENT", "KILL", "TYPE", "master").Err(); err != nil {
						return err.Error(), nil
					}
				}
			}
			return fmt.Sprintf("master: %d of %d replicas acknowledge its writes", acks, replicatedReplicas), nil
		}
		for _, s := range r.sentinels {
			cmd := redis.NewMapStringStringCmd(ctx, "SENTINEL", "MASTER", MasterName)
			s.Admin().Process(ctx, cmd)
			m, err := cmd.Result()
			if err != nil {
				return fmt.Sprintf("sentinel %s: %v", s.Name(), err), nil
			}
			want := strconv.Itoa(sentinelCount - 1)
			if m["flags"] != "master" || m["num-slaves"] != strconv.Itoa(replicatedReplicas) || m["num-other-sentinels"] != want {
				return fmt.Sprintf("sentinel %s: flags %s, %s replicas, %s other sentinels",
					s.Name(), m["flags"], m["num-slaves"], m["num-other-sentinels"]), nil
			}
		}
		return "", nil
	})
}

// Nodes returns the data nodes, not the Sentinels: the first master, then the
// replicas, in start order. Which is master now is for Master to say.
func (r *ReplicaSet) Nodes() []Node { return slices.Clone(r.nodes) }

// Sentinels returns the Sentinel nodes.
func (r *ReplicaSet) Sentinels() []Node { return slices.Clone(r.sentinels) }

// SentinelAddrs returns the Sentinels' addresses, as a failover client wants them.
func (r *ReplicaSet) SentinelAddrs() []string {
	addrs := make([]string, len(r.sentinels))
	for i, s := range r.sentinels {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Master returns the node that a majority of the Sentinels name as master now
// (SENTINEL GET-MASTER-ADDR-BY-NAME). It fails when no majority agrees, as in
// the middle of a failover.
func (r *ReplicaSet) Master(ctx context.Context) (Node, error) {
	addr, err := r.namedMaster(ctx)
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	n := r.dataNode(addr)
	if n == nil {
		return nil, fmt.Errorf("master: the Sentinels name %s, which is no data node", addr)
	}
	return n, nil
}

// namedMaster asks every Sentinel for the master's address and returns the one
// a majority gives.
func (r *ReplicaSet) namedMaster(ctx context.Context) (string, error) {
	votes := make(map[string]int)
	var answers []string
	for _, s := range r.sentinels {
		// A short bound per Sentinel, so that one slow Sentinel does not hold up
		// the poll of AwaitFailover.
		actx, cancel := context.WithTimeout(ctx, sentinelAskTimeout)
		hostPort, err := s.Admin().Do(actx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MasterName).StringSlice()
		cancel()
		if err != nil || len(hostPort) != 2 {
			answers = append(answers, fmt.Sprintf("%s: %v %v", s.Name(), hostPort, err))
			continue
		}
		addr := net.JoinHostPort(hostPort[0], hostPort[1])
		answers = append(answers, s.Name()+": "+addr)
		if votes[addr]++; votes[addr] > len(r.sentinels)/2 {
			return addr, nil
		}
	}
	return "", fmt.Errorf("no majority of the Sentinels names a master (%s)", strings.Join(answers, ", "))
}

// dataNode returns the data node at addr, as clients or the Sentinels know
// it, or nil.
func (r *ReplicaSet) dataNode(addr string) Node {
	for _, n := range r.nodes {
		if n.Addr() == addr || r.peerAddr(n) == addr {
			return n
		}
	}
	return nil
}

// AwaitFailover waits until a majority of the Sentinels name a master other
// than from, and returns it with the time taken since the call. It polls the
// Sentinels every few milliseconds, so took is observed, not slept; it gives
// up when ctx ends or after 30 s.
func (r *ReplicaSet) AwaitFailover(ctx context.Context, from cluster.Node) (to Node, took time.Duration, err error) {
	start := time.Now()
	if from == nil {
		return nil, 0, errors.New("await failover: from is nil")
	}
	ctx, cancel := context.WithTimeout(ctx, failoverCap)
	defer cancel()
	err = cluster.PollUntil(ctx, "await failover from "+from.Name(), func(ctx context.Context) (string, error) {
		addr, err := r.namedMaster(ctx)
		switch {
		case err != nil:
			return err.Error(), nil
		case cluster.Node(r.dataNode(addr)) == from:
			return "the Sentinels still name " + from.Name(), nil
		}
		if to = r.dataNode(addr); to == nil {
			return "", fmt.Errorf("the Sentinels name %s, which is no data node", addr)
		}
		return "", nil
	})
	took = time.Since(start)
	if err != nil {
		return nil, took, err
	}
	return to, took, nil
}

// CutReplication cuts the replication of replica from the current master:
// the replica is detoured through its own link to the master, which is cut,
// so it receives and acknowledges nothing, and knows it (master_link_status
// down), until the heal, which points it back at the master; it then catches
// up from the master's backlog. Replica must not be the master. Faults may
// overlap. The fault ends early if Sentinel re-points the replica, which it
// does once the detour has lasted 10 s while the master is up (see the top
// of this file; the heal then returns an error), or at a failover.
func (r *ReplicaSet) CutReplication(ctx context.Context, node cluster.Node) (network.Heal, error) {
	replica := r.member(node)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.net != nil {
		return r.cutAtNetwork(ctx, replica)
	}
	link, err := r.replicationLink(ctx, replica)
	if err != nil {
		return noHeal, fmt.Errorf("cut replication: %w", err)
	}
	// Cut first, so that not one byte passes once the replica dials the link.
	uncut, err := r.proxy.Cut(ctx, link)
	if err != nil {
		return noHeal, fmt.Errorf("cut replication of %s: %w", replica.Name(), err)
	}
	if _, err := r.detour(ctx, replica, link); err != nil {
		return noHeal, errors.Join(fmt.Errorf("cut replication of %s: %w", replica.Name(), err), uncut())
	}
	return r.replicationHeal(replica, link, uncut), nil
}

// DelayReplication delays by d each way the replication of replica from the
// current master (toxiproxy latency on its own link, as for CutReplication):
// writes reach it d late, and its acknowledgements, which WAIT counts, 2d late.
// The same limits as for CutReplication apply.
func (r *ReplicaSet) DelayReplication(ctx context.Context, node cluster.Node, d time.Duration) (network.Heal, error) {
	replica := r.member(node)
	if r.net != nil {
		return noHeal, fmt.Errorf("delay replication: not on the %s backend, whose network has no delay (its images have no tc); "+
			"the local backend delays it", r.net.Name())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	link, err := r.replicationLink(ctx, replica)
	if err != nil {
		return noHeal, fmt.Errorf("delay replication: %w", err)
	}
	fresh, err := r.detour(ctx, replica, link)
	if err != nil {
		return noHeal, fmt.Errorf("delay replication of %s: %w", replica.Name(), err)
	}
	if fresh {
		// The replication handshake takes several round trips; through a slow
		// link it would stall replication for many times d, which is not the
		// fault asked for. The latency toxic also acts on open connections, so
		// let the handshake finish first.
		if err := awaitLinkUp(ctx, replica); err != nil {
			return noHeal, errors.Join(fmt.Errorf("delay replication of %s: %w", replica.Name(), err),
				r.undetour(replica, link))
		}
	}
	undelay, err := r.proxy.Delay(ctx, d, 0, link)
	if err != nil {
		return noHeal, errors.Join(fmt.Errorf("delay replication of %s: %w", replica.Name(), err),
			r.undetour(replica, link))
	}
	return r.replicationHeal(replica, link, undelay), nil
}

// cutAtNetwork is CutReplication on a cluster.Networked backend: the replica's path
// to the current master is cut at the network, and the replica does not know
// it until its replication times out, as in a real partition. The cut lasts
// until the heal; a failover leaves it on the path to the old master. Called
// with r.mu held.
func (r *ReplicaSet) cutAtNetwork(ctx context.Context, replica Node) (network.Heal, error) {
	master, err := r.masterOf(ctx, replica)
	if err != nil {
		return noHeal, fmt.Errorf("cut replication: %w", err)
	}
	return r.net.CutReplication(ctx, replica, master)
}

// replicationLink returns the link from the current master to replica.
func (r *ReplicaSet) replicationLink(ctx context.Context, replica Node) (*network.Link, error) {
	master, err := r.masterOf(ctx, replica)
	if err != nil {
		return nil, err
	}
	return r.links[replPair{replica, master}], nil
}

// member is n as one of the set's data nodes, or nil when it is none of
// them (masterOf then says so).
func (r *ReplicaSet) member(n cluster.Node) Node {
	if n == nil {
		return nil
	}
	if rn := r.dataNode(n.Addr()); rn != nil && cluster.Node(rn) == n {
		return rn
	}
	return nil
}

// masterOf is the master that replica, a data node other than the master,
// replicates from now.
func (r *ReplicaSet) masterOf(ctx context.Context, replica Node) (Node, error) {
	if replica == nil || r.dataNode(replica.Addr()) != replica {
		return nil, errors.New("not a data node of this topology")
	}
	if r.closed {
		return nil, errors.New("topology closed")
	}
	master, err := r.Master(ctx)
	if err != nil {
		return nil, err
	}
	if master == replica {
		return nil, fmt.Errorf("%s is the master", replica.Name())
	}
	return master, nil
}

// detour points replica at link, unless it already replicates through it
// for an earlier fault; fresh says whether this call did. Called with r.mu held.
func (r *ReplicaSet) detour(ctx context.Context, replica Node, link *network.Link) (fresh bool, err error) {
	r.detours[link]++
	// Looked up rather than assumed from the count: Sentinel may have ended
	// the earlier fault's detour.
	if r.detours[link] > 1 {
		if from, err := replicaMasterAddr(ctx, replica); err == nil && from == link.Addr() {
			return false, nil
		}
	}
	host, port, _ := net.SplitHostPort(link.Addr())
	// The replica drops its connection to the master before REPLICAOF returns,
	// so nothing the master writes afterwards reaches it but through the link.
	if err := replica.Admin().Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		r.detours[link]--
		return false, fmt.Errorf("detour through link %s: %w", link.Name(), err)
	}
	return true, nil
}

// undetour points replica back at the master when the last fault on link
// ends. It reports a detour that Sentinel ended early. Called with r.mu held.
func (r *ReplicaSet) undetour(replica Node, link *network.Link) error {
	if r.detours[link]--; r.detours[link] > 0 {
		return nil
	}
	// A node that is down replicates, once restarted, from its start-up
	// address, which Sentinel corrects: nothing to undo.
	if !replica.Running() {
		return nil
	}
	// A heal runs whenever the fault ends, maybe after the run's ctx.
	ctx, cancel := context.WithTimeout(context.Background(), repointTimeout)
	defer cancel()
	from, err := replicaMasterAddr(ctx, replica)
	if err != nil {
		return fmt.Errorf("end detour of %s: %w", replica.Name(), err)
	}
	switch from {
	case link.Addr():
		host, port, _ := net.SplitHostPort(link.Upstream())
		if err := replica.Admin().Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
			return fmt.Errorf("end detour of %s: %w", replica.Name(), err)
		}
	case link.Upstream():
		return fmt.Errorf("replication fault on %s ended before its heal: the replica replicates straight from %s again "+
			"(Sentinel re-points a detoured replica after %v, +fix-slave-config; a restart of the replica does too)",
			replica.Name(), link.Upstream(), sentinelFailoverTimeout)
	}
	// Otherwise a failover gave the replica a new master (or made it one).
	return nil
}

// replicationHeal returns the network.Heal of a replication fault: the link is healed
// (a failed part of that is retried on the next call), then the replica is
// pointed back at the master, once. In that order because toxiproxy takes
// seconds to remove a latency toxic from a connection that closed under it,
// and pointing the replica away closes its connection through the link.
func (r *ReplicaSet) replicationHeal(replica Node, link *network.Link, undo network.Heal) network.Heal {
	var mu sync.Mutex
	undetoured := false
	return func() error {
		mu.Lock()
		defer mu.Unlock()
		err := undo()
		if !undetoured {
			undetoured = true
			r.mu.Lock()
			err = errors.Join(err, r.undetour(replica, link))
			r.mu.Unlock()
		}
		return err
	}
}

// replicaMasterAddr returns the address n replicates from, "" when n is a master.
func replicaMasterAddr(ctx context.Context, n Node) (string, error) {
	info, err := n.Admin().Info(ctx, "replication").Result()
	if err != nil {
		return "", err
	}
	if infoValue(info, "role") != "slave" {
		return "", nil
	}
	return net.JoinHostPort(infoValue(info, "master_host"), infoValue(info, "master_port")), nil
}

// awaitLinkUp polls until replica reports its link to its master up.
func awaitLinkUp(ctx context.Context, replica Node) error {
	ctx, cancel := context.WithTimeout(ctx, repointTimeout)
	defer cancel()
	return cluster.PollUntil(ctx, "await replication link of "+replica.Name(), func(ctx context.Context) (string, error) {
		status, err := infoField(ctx, replica, "replication", "master_link_status")
		if err != nil {
			return err.Error(), nil
		}
		if status != "up" {
			return "master_link_status " + status, nil
		}
		return "", nil
	})
}

// FailoverClient builds a go-redis Sentinel failover client for MasterName.
// It reaches each data node with dial(ctx, addr), addr being the node's Addr
// (Sentinel reports it, or, on a cluster.Networked backend, its name there, which
// FailoverClient maps to its Addr), so that a client can map it to a link of
// its own; a nil dial dials directly. The Sentinels are always dialled directly:
// no fault is meant to sit between a client and them. From opts it takes the
// protocol, identity, credentials, timeouts, retries and pool settings, for
// its connections to the nodes and to the Sentinels alike; hooks go on the
// returned client (AddHook). Close it when done.
func (r *ReplicaSet) FailoverClient(opts *redis.Options, dial func(ctx context.Context, addr string) (net.Conn, error)) *redis.Client {
	if opts == nil {
		opts = &redis.Options{}
	}
	timeout := opts.DialTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second // go-redis's default
	}
	direct := &net.Dialer{Timeout: timeout}
	sentinels := r.SentinelAddrs()
	// On a cluster.Networked backend the Sentinels name nodes, and each other, by
	// their addresses on its network; clients dial them where published.
	published := map[string]string{}
	if r.net != nil {
		for _, n := range append(r.Nodes(), r.sentinels...) {
			published[r.net.PeerAddr(n.Name())] = n.Addr()
		}
	}
	return redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:    MasterName,
		SentinelAddrs: sentinels,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if a, ok := published[addr]; ok {
				addr = a
			}
			if dial == nil || slices.Contains(sentinels, addr) {
				return direct.DialContext(ctx, network, addr)
			}
			return dial(ctx, addr)
		},
		OnConnect:             opts.OnConnect,
		ClientName:            opts.ClientName,
		Protocol:              opts.Protocol,
		Username:              opts.Username,
		Password:              opts.Password,
		DB:                    opts.DB,
		MaxRetries:            opts.MaxRetries,
		MinRetryBackoff:       opts.MinRetryBackoff,
		MaxRetryBackoff:       opts.MaxRetryBackoff,
		DialTimeout:           opts.DialTimeout,
		DialerRetries:         opts.DialerRetries,
		DialerRetryTimeout:    opts.DialerRetryTimeout,
		DialerRetryBackoff:    opts.DialerRetryBackoff,
		ReadTimeout:           opts.ReadTimeout,
		WriteTimeout:          opts.WriteTimeout,
		ContextTimeoutEnabled: opts.ContextTimeoutEnabled,
		PoolFIFO:              opts.PoolFIFO,
		PoolSize:              opts.PoolSize,
		PoolTimeout:           opts.PoolTimeout,
		MinIdleConns:          opts.MinIdleConns,
		MaxIdleConns:          opts.MaxIdleConns,
		MaxActiveConns:        opts.MaxActiveConns,
		ConnMaxIdleTime:       opts.ConnMaxIdleTime,
		ConnMaxLifetime:       opts.ConnMaxLifetime,
		DisableIdentity:       opts.DisableIdentity,
		IdentitySuffix:        opts.IdentitySuffix,
	})
}

// Close stops the Sentinels, then the data nodes, and removes what
// StartReplicaSet wrote. Calling it again does nothing and returns nil.
// The links stay in the Network until it is closed.
func (r *ReplicaSet) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()

	var errs []error
	// Sentinels first, so that none reconfigures a node on its way down.
	for _, n := range append(slices.Clone(r.sentinels), r.nodes...) {
		if n != nil { // a node whose start failed
			errs = append(errs, n.Stop())
		}
	}
	return errors.Join(errs...)
}

// infoField returns one field of one INFO section of n.
func infoField(ctx context.Context, n Node, section, field string) (string, error) {
	info, err := n.Admin().Info(ctx, section).Result()
	if err != nil {
		return "", fmt.Errorf("%s: INFO %s: %w", n.Name(), section, err)
	}
	return infoValue(info, field), nil
}

// infoValue returns the value of field in the text of an INFO reply, "" if absent.
func infoValue(info, field string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// noHeal is the heal of a fault that applied nothing.
func noHeal() error { return nil }
