package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/network"
)

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

// About: its effect is a loss: the node's keys expire early.
func (f ClockJump) About() About {
	return onNodes("clock-jump", f.Node)
}

// Inject shortens the TTLs; a jump is not undone, so the heal does nothing.
func (f ClockJump) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	n, err := env.node(f.Node)
	if err != nil {
		return nil, err
	}
	j, ok := env.Cluster.Deployment().(cluster.TTLJumper)
	if !ok {
		// The kind strikes ZooKeeper too, by ClockJumpServer: this fault
		// moves a Redis node's TTLs, which another server has not.
		return nil, fmt.Errorf("%s needs a Redis lock node; %s is not one (a ZooKeeper server's clock: ClockJumpServer)", f, n.Name())
	}
	if err := j.JumpTTLs(ctx, n, f.By); err != nil {
		return nil, fmt.Errorf("clock jump on %s: %w", n.Name(), err)
	}
	return once(func() error { return nil }), nil
}
