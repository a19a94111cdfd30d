package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/harness"
)

// probeTimeout bounds a probe's read of the key's state: it is on a direct
// local connection, and the lock's command waits for it.
const probeTimeout = 100 * time.Millisecond

// probes are locklab's own connections to each lock node, in the order of
// the deployment's nodes, with no hook and short timeouts: how the harness
// reads the lock key's state around an Acquire's command to tell whether
// it took the key (harness.KeyReader).
type probes []*goredis.Client

// probeOptions are a probe's go-redis settings: one connection, short
// timeouts.
func probeOptions(addr string) *goredis.Options {
	o := options(addr, probeTimeout)
	o.PoolSize = 1
	return o
}

// Probe dials c's probes to the masters' own addresses, past any link
// (harness.Prober).
func (d *masters) Probe(c *harness.Client) harness.KeyReader {
	var p probes
	for _, n := range d.nodes {
		p = append(p, goredis.NewClient(probeOptions(n.Addr())))
	}
	return p
}

// Probe dials c's probe on replicated: a Sentinel failover client of its
// own, dialling the master Sentinel names directly.
func (d *replicated) Probe(c *harness.Client) harness.KeyReader {
	return probes{d.rs.FailoverClient(probeOptions(""), nil)}
}

// ReadKey reads key on node with DUMP: its serialization, or exists false
// when there is no key; an error when the read failed (the node is down,
// paused or cut off, or there is no probe to node).
func (p probes) ReadKey(ctx context.Context, node int, key string) (dump string, exists bool, err error) {
	if node < 0 || node >= len(p) {
		return "", false, fmt.Errorf("no probe to lock node %d", node)
	}
	dump, err = p[node].Dump(ctx, key).Result()
	switch {
	case errors.Is(err, goredis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return dump, true, nil
}

// Close closes the probes, when the client ends.
func (p probes) Close() error {
	var errs []error
	for _, rc := range p {
		errs = append(errs, rc.Close())
	}
	return errors.Join(errs...)
}
