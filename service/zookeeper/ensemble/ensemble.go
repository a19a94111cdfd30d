// Package ensemble is what a backend implements to run ZooKeeper for
// service/zookeeper: the Set of servers it started and the Starter that
// starts them, with the readings of a server's mode and of the leader that
// both sides need (the backend waits for a leader; the service's
// deployment names it).
//
// It is a package of its own, not part of service/zookeeper, because the
// backends import it: service/zookeeper dials clients and so imports
// harness, whose own tests start clusters on the local backend, which
// would then import harness back.
package ensemble

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster"
)

// ErrNoZooKeeper means a run on the zookeeper topology could not start
// ZooKeeper: no Java or no ZooKeeper jars (cluster/local/zookeeper: Path),
// or a backend without ZooKeeper. A suite skips such a run, as one that
// lacks redis-server.
var ErrNoZooKeeper = errors.New("zookeeper not found")

// Set is a running ZooKeeper ensemble, however its backend runs it.
type Set interface {
	// Nodes are its servers, in the order of Endpoints; each a Node whose
	// Admin is nil (it speaks no Redis).
	Nodes() []cluster.Node
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

// Starter is a cluster.RunSession that can start a ZooKeeper ensemble.
// It is an interface of its own, not a method of RunSession, so that a
// backend without ZooKeeper needs no change: its runs on the zookeeper
// topology fail at start, naming what is missing.
type Starter interface {
	// StartZooKeeper starts an ensemble of n servers whose files live
	// under dir and returns once it has a leader.
	StartZooKeeper(ctx context.Context, dir string, n int) (Set, error)
}

// Leader is set's leader now: the one server that says it leads
// (four-letter word srvr), while a majority of the servers answer as
// leader or follower, that is, serve. A server between elections says
// neither.
func Leader(ctx context.Context, set Set) (cluster.Node, int, error) {
	leader, serving := -1, 0
	var modes []string
	for i, addr := range set.Endpoints() {
		mode, err := Mode(ctx, addr)
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

// Mode asks the server at addr for its mode with the four-letter word
// srvr: "leader", "follower", "standalone", or an error when it does not
// serve (it is down, paused, or between elections).
func Mode(ctx context.Context, addr string) (string, error) {
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
