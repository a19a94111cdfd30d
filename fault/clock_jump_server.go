package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/network"
)

// EveryServer is a ClockJumpServer's Node when the jump strikes every
// server of the ensemble at once.
const EveryServer = -1

// ClockJumpServer makes the clock of a lock server (Node, or EveryServer)
// jump forward By, for real, as a clock stepped by NTP or an operator
// does (cluster.ClockJumper): libfaketime, preloaded into the server's
// process, moves its wall clock and leaves its monotonic clock alone. On
// a ZooKeeper server, on local processes and on docker alike, that moves
// System.currentTimeMillis and not System.nanoTime, with which ZooKeeper
// times sessions (Time.currentElapsedTime), so no session expires; znodes'
// mtime and ctime, which the leader stamps, jump. On a local MariaDB or
// PostgreSQL server it moves NOW(), and with it every expiry a lock keeps
// in the server's time. On a memcached server (local processes),
// libfaketime moves both its clocks, since memcached times expiry by a
// tick it reads from CLOCK_MONOTONIC: its items expire early. An etcd
// member's clock cannot be moved so (Go reads it through the vDSO, past
// libfaketime), nor can a server on docker other than ZooKeeper's: a jump
// not made spoils the run, unknown with the reason. etcd times leases
// with Go's monotonic clock anyway (lease.Remaining: time.Until).
type ClockJumpServer struct {
	Node int
	By   time.Duration
}

func (f ClockJumpServer) String() string {
	which := fmt.Sprintf("server %d", f.Node)
	if f.Node == EveryServer {
		which = "every server"
	}
	return fmt.Sprintf("clock jump of %s on %s of the lock service (real on ZooKeeper and on a local MariaDB or PostgreSQL: "+
		"libfaketime moves the server's wall clock, not its monotonic clock; on memcached's local process, both; not made on etcd, "+
		"whose Go runtime reads the clock past libfaketime, nor on docker but for ZooKeeper: that run is unknown)", f.By, which)
}

// About: a clock jump on a lock node, whatever it does to the locks.
func (f ClockJumpServer) About() About {
	if f.Node == EveryServer {
		return onNodes("clock-jump") // every lock node: the record names them (Env.target)
	}
	return onNodes("clock-jump", f.Node)
}

// Inject jumps the clocks; a jump is not undone, so the heal does nothing.
func (f ClockJumpServer) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	nodes := env.Cluster.LockNodes()
	if f.Node != EveryServer {
		n, err := env.node(f.Node)
		if err != nil {
			return nil, err
		}
		nodes = []cluster.Node{n}
	}
	for _, n := range nodes {
		j, ok := n.(cluster.ClockJumper)
		var err error
		if !ok {
			err = errors.New("its clock cannot be moved here: only a ZooKeeper server or a local memcached runs under libfaketime, and an " +
				"etcd member, a Go server, reads the clock through the vDSO, past libfaketime (locklab does not move the machine's clock)")
		} else {
			err = j.JumpClock(f.By)
		}
		if err != nil {
			if len(env.clients) == 0 {
				return nil, fmt.Errorf("%s on %s: %w", f, n.Name(), err)
			}
			env.clients[0].Spoil(fmt.Sprintf("%s was not made on %s: %v", f, n.Name(), err))
			return once(func() error { return nil }), nil
		}
	}
	if err := f.checkStamp(ctx, env); err != nil {
		if len(env.clients) == 0 {
			return nil, err
		}
		env.clients[0].Spoil(err.Error())
	}
	return once(func() error { return nil }), nil
}

// checkStamp proves a jump that struck the leader of a service whose
// leader stamps its writes (cluster.Stamper: ZooKeeper): a write made
// after it carries a stamp, which the leader takes from its wall clock, By
// ahead of the real clock (a second of slack for the write). A jump of a
// follower alone leaves no such trace, and is not checked.
func (f ClockJumpServer) checkStamp(ctx context.Context, env *Env) error {
	stamper, ok := env.Cluster.Deployment().(cluster.Stamper)
	if !ok {
		return nil
	}
	if f.Node != EveryServer {
		if _, leader, err := env.Cluster.Leader(ctx); err != nil || leader != f.Node {
			return nil
		}
	}
	before := time.Now()
	stamp, err := stamper.Stamp(ctx)
	if err != nil {
		return fmt.Errorf("%s: check the jump: %w", f, err)
	}
	if ahead := stamp.Sub(before); ahead < f.By-time.Second {
		return fmt.Errorf("%s did not reach the leader's clock: a znode written after it is stamped %s ahead, not %s", f, ahead, f.By)
	}
	return nil
}
