package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// Service is the Redis lock service, on three topologies: single (one
// master), replicated (a master, two replicas and three Sentinels) and
// redlock (five independent masters). Its servers are redis-servers that
// every backend starts (RunSession.StartNode).
type Service struct{}

// Name is cluster.Redis.
func (Service) Name() cluster.Service { return cluster.Redis }

// Start deploys the single topology, keeping nothing on disk; the cluster
// calls StartTopology, which is told the topology.
func (s Service) Start(ctx context.Context, run cluster.RunSession, dir string) (cluster.Deployment, error) {
	return s.StartTopology(ctx, run, dir, cluster.Setup{Topology: cluster.Single})
}

// StartTopology deploys setup's topology on run, its servers' files under
// dir; the replicated topology makes its replication detours in
// setup.Network.
func (Service) StartTopology(ctx context.Context, run cluster.RunSession, dir string, setup cluster.Setup) (cluster.Deployment, error) {
	count := 1
	switch setup.Topology {
	case cluster.Replicated:
		rs, err := sentinel.StartReplicaSet(ctx, run, dir, setup.Network)
		if err != nil {
			return nil, err
		}
		return &replicated{masters: masters{nodes: rs.Nodes()}, rs: rs}, nil
	case cluster.Redlock:
		count = 5
	case cluster.Single, "":
	default:
		return nil, fmt.Errorf("redis: no topology %s", setup.Topology)
	}
	var cfgs []cluster.NodeConfig
	for i := range count {
		cfgs = append(cfgs, cluster.NodeConfig{Name: fmt.Sprintf("n%d", i+1), Dir: dir, Persistence: setup.Persistence})
	}
	nodes, err := sentinel.StartNodes(ctx, run, cfgs)
	d := &masters{nodes: nodes}
	if err != nil {
		return nil, errors.Join(err, d.Stop())
	}
	return resettable{d}, nil
}

// masters are independent Redis masters: the single topology's one, or
// Redlock's five.
type masters struct{ nodes []sentinel.Node }

// Nodes are the masters, in order.
func (d *masters) Nodes() []cluster.Node { return cluster.NodesOf(d.nodes) }

// LockState reads the lock's key on the first master.
func (d *masters) LockState(ctx context.Context, key string) (cluster.State, error) {
	return lockState(ctx, d.nodes[0], key)
}

// Stop stops every master that started.
func (d *masters) Stop() error {
	var errs []error
	for _, n := range d.nodes {
		if n != nil {
			errs = append(errs, n.Stop())
		}
	}
	return errors.Join(errs...)
}

// lockState reads key's PTTL on n, past any link.
func lockState(ctx context.Context, n sentinel.Node, key string) (cluster.State, error) {
	pttl, err := n.Admin().PTTL(ctx, key).Result()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return cluster.Free, fmt.Errorf("read the lock's PTTL: %w", err)
	}
	// go-redis reports Redis's -1 (no expiry) and -2 (no key) as those
	// many nanoseconds.
	switch pttl {
	case -2:
		return cluster.Free, nil
	case -1:
		return cluster.Unexpiring(), nil
	}
	return cluster.Until(pttl), nil
}

// jumpScript expires what a jump of ARGV[1] ms would expire and shortens the rest.
var jumpScript = goredis.NewScript(`
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

// JumpTTLs shortens every TTL on node by by, in one script.
func (d *masters) JumpTTLs(ctx context.Context, node cluster.Node, by time.Duration) error {
	n, ok := node.(sentinel.Node)
	if !ok {
		return fmt.Errorf("%s is no Redis node", node.Name())
	}
	return jumpScript.Run(ctx, n.Admin(), nil, by.Milliseconds()).Err()
}

// replicated is the replicated topology: its data nodes are the masters,
// the master at the start first.
type replicated struct {
	masters
	rs *sentinel.ReplicaSet
}

// ReplicaSet is the topology's master, replicas and Sentinels.
func (d *replicated) ReplicaSet() *sentinel.ReplicaSet { return d.rs }

// LockState reads the lock's key on the master a majority of the Sentinels
// name.
func (d *replicated) LockState(ctx context.Context, key string) (cluster.State, error) {
	master, err := d.rs.Master(ctx)
	if err != nil {
		return cluster.Free, err
	}
	return lockState(ctx, master, key)
}

// Stop stops the Sentinels, then the data nodes.
func (d *replicated) Stop() error { return d.rs.Close() }

// Watchers are the Sentinels.
func (d *replicated) Watchers() []cluster.Node { return cluster.NodesOf(d.rs.Sentinels()) }

// Master is the data node a majority of the Sentinels name.
func (d *replicated) Master(ctx context.Context) (cluster.Node, error) {
	n, err := d.rs.Master(ctx)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// AwaitFailover waits for the Sentinels to name a master other than from.
func (d *replicated) AwaitFailover(ctx context.Context, from cluster.Node) (cluster.Node, time.Duration, error) {
	to, took, err := d.rs.AwaitFailover(ctx, from)
	if err != nil {
		return nil, took, err
	}
	return to, took, nil
}

// CutReplication cuts node's replication (ReplicaSet.CutReplication).
func (d *replicated) CutReplication(ctx context.Context, node cluster.Node) (network.Heal, error) {
	return d.rs.CutReplication(ctx, node)
}

// PreferReplica sets node's replica-priority to 1, where the others keep
// the default, 100: Sentinel ranks priority before replication offset, as
// an operator makes a replica in the main data centre the first choice.
// The heal puts back the default.
func (d *replicated) PreferReplica(ctx context.Context, node cluster.Node) (network.Heal, error) {
	n, ok := node.(sentinel.Node)
	if !ok {
		return nil, fmt.Errorf("%s is no Redis node", node.Name())
	}
	if err := n.Admin().ConfigSet(ctx, "replica-priority", "1").Err(); err != nil {
		return nil, fmt.Errorf("prefer %s: %w", n.Name(), err)
	}
	return func() error {
		// A heal runs whenever the fault ends, maybe after the run's ctx.
		hctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return n.Admin().ConfigSet(hctx, "replica-priority", "100").Err()
	}, nil
}

// ReplicaSet is the replicated topology's set of cl, or nil on another
// topology.
func ReplicaSet(cl *cluster.Cluster) *sentinel.ReplicaSet {
	if d, ok := cl.Deployment().(*replicated); ok {
		return d.rs
	}
	return nil
}

// resettable is the single and redlock topologies' masters, which a Pool
// reuses between runs (cluster.Resetter). The replicated topology, which
// embeds masters too, is no Resetter: a run leaves its failover state in
// the Sentinels and its replicas' offsets.
type resettable struct{ *masters }

// Reset empties every master: the lock's keys, its fencing counter and
// whatever else a run wrote.
func (d resettable) Reset(ctx context.Context) error {
	for _, n := range d.nodes {
		if err := n.Admin().FlushAll(ctx).Err(); err != nil {
			return fmt.Errorf("flush %s: %w", n.Name(), err)
		}
	}
	return nil
}

// Clean reports the first master that holds a key (cluster.Resetter).
func (d resettable) Clean(ctx context.Context) error {
	for _, n := range d.nodes {
		if err := emptyNode(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// emptyNode reports an error when n holds a key.
func emptyNode(ctx context.Context, n sentinel.Node) error {
	keys, err := n.Admin().DBSize(ctx).Result()
	switch {
	case err != nil:
		return fmt.Errorf("count %s's keys: %w", n.Name(), err)
	case keys > 0:
		return fmt.Errorf("%s still holds %d keys", n.Name(), keys)
	}
	return nil
}
