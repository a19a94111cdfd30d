package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// ZooKeeper is the lock service of the zookeeper topology: a three-server
// ZooKeeper ensemble that replicates every write through Zab.
const ZooKeeper Service = "zookeeper"

// ZooKeeperTopology is three ZooKeeper servers, each a lock node: a lock
// is an ephemeral sequential node that lives as long as its holder's
// session, and a write is committed once a quorum has it, so a failover
// loses no lock (compare Redis's pitfall 10).
const ZooKeeperTopology Topology = "zookeeper"

// ZooKeeperServers is how many servers the zookeeper topology starts: the
// smallest ensemble that survives the loss of one.
const ZooKeeperServers = 3

// ZooKeeperLockRoot is where the ZooKeeper locks keep their nodes: the
// lock named key is the parent ZooKeeperLockRoot+"/"+key, with one
// ephemeral sequential child per waiter or holder.
const ZooKeeperLockRoot = "/locklab"

// ErrNoZooKeeper means a run on the zookeeper topology could not start
// ZooKeeper: no Java or no ZooKeeper jars (cluster/local/zookeeper: Path), or a
// backend without ZooKeeper. A suite skips such a run, as one that lacks
// redis-server.
var ErrNoZooKeeper = errors.New("zookeeper not found")

// ZooKeeperSet is a running ZooKeeper ensemble, however its backend runs
// it.
type ZooKeeperSet interface {
	// Nodes are its servers, in the order of Endpoints; each a Node whose
	// Admin is nil (it speaks no Redis).
	Nodes() []Node
	// Endpoints are the servers' client addresses (host:port), which stay
	// the same across restarts.
	Endpoints() []string
	// Admin is a session with the ensemble, past any link, for the
	// harness's own use (the leader, the lock's state).
	Admin() *zk.Conn
	// Stop stops every server and removes their files; it may be called
	// twice.
	Stop() error
}

// ZooKeeperStarter is a RunSession that can start a ZooKeeper ensemble.
// It is an interface of its own, not a method of RunSession, so that a
// backend without ZooKeeper needs no change: its runs on the zookeeper
// topology fail at start, naming what is missing.
type ZooKeeperStarter interface {
	// StartZooKeeper starts an ensemble of n servers whose files live
	// under dir and returns once it has a leader.
	StartZooKeeper(ctx context.Context, dir string, n int) (ZooKeeperSet, error)
}

// startZooKeeper starts the ensemble of the zookeeper topology on run.
func (c *Cluster) startZooKeeper(ctx context.Context, run RunSession) error {
	starter, ok := run.(ZooKeeperStarter)
	if !ok {
		return fmt.Errorf("%w: ZooKeeper is not available on the %s backend yet: use -backend local", ErrNoZooKeeper, run.Name())
	}
	set, err := starter.StartZooKeeper(ctx, c.dir.Path(), ZooKeeperServers)
	if err != nil {
		return err
	}
	c.zk = set
	c.masters = set.Nodes()
	return nil
}

// ZooKeeperEnsemble is the ensemble of the zookeeper topology, or nil.
func (c *Cluster) ZooKeeperEnsemble() ZooKeeperSet { return c.zk }

// ZooKeeperLeader is set's leader now: the one server that says it leads
// (four-letter word srvr), while a majority of the servers answer as
// leader or follower, that is, serve. A server between elections says
// neither.
func ZooKeeperLeader(ctx context.Context, set ZooKeeperSet) (Node, int, error) {
	leader, serving := -1, 0
	var modes []string
	for i, addr := range set.Endpoints() {
		mode, err := ZooKeeperMode(ctx, addr)
		if err != nil {
			modes = append(modes, err.Error())
			continue
		}
		modes = append(modes, mode)
		switch mode {
		case "leader":
			if leader >= 0 {
				return nil, -1, fmt.Errorf("zookeeper has two leaders (%s)", strings.Join(modes, "; "))
			}
			leader = i
			serving++
		case "follower":
			serving++
		}
	}
	if leader < 0 || serving <= len(set.Endpoints())/2 {
		return nil, -1, fmt.Errorf("zookeeper has no leader with a quorum (modes: %s)", strings.Join(modes, "; "))
	}
	return set.Nodes()[leader], leader, nil
}

// ZooKeeperMode asks the server at addr for its mode with the four-letter
// word srvr: "leader", "follower", "standalone", or an error when it does
// not serve (it is down, paused, or between elections).
func ZooKeeperMode(ctx context.Context, addr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("srvr %s: %w", addr, err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline) // a fresh socket takes a deadline
	if _, err := conn.Write([]byte("srvr")); err != nil {
		return "", fmt.Errorf("srvr %s: %w", addr, err)
	}
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		if mode, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return strings.TrimSpace(mode), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("srvr %s: %w", addr, err)
	}
	// "This ZooKeeper instance is not currently serving requests".
	return "", fmt.Errorf("srvr %s: not serving", addr)
}

// zkLockState is LockState on the zookeeper topology: -2 when the lock has
// no node, else 0. The holder's node lives as long as its session, whose
// time left the server does not tell another session: 0 says "held, until
// a session expires", not a lease of a known length.
//
// A server answers reads from its own copy, which may lag the leader's: a
// node a client just made through another server was missing from 1–2% of
// reads on a loaded machine. Sync first brings the admin's server up to
// what the leader had committed when it asked.
func (c *Cluster) zkLockState(ctx context.Context, key string) (time.Duration, error) {
	if _, err := c.zk.Admin().Sync("/"); err != nil {
		return 0, fmt.Errorf("catch up with the leader (sync): %w", err)
	}
	children, _, err := c.zk.Admin().Children(ZooKeeperLockRoot + "/" + key)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return -2, nil
	case err != nil:
		return 0, fmt.Errorf("read the lock's nodes: %w", err)
	case len(children) == 0:
		return -2, nil
	}
	return 0, ctx.Err()
}
