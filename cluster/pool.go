package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/network"
)

// Resetter is a Deployment that can be made fresh again in place, so that
// a Pool hands it to the next run instead of starting another: what a run
// leaves on its servers (the lock's keys, rows or nodes; its clients'
// sessions, leases and connections) is all a reset removes. A Deployment
// without it is stopped after every run.
type Resetter interface {
	// Reset removes what a run left on the servers. It is called after the
	// run's clients and links are gone, with every server up.
	Reset(ctx context.Context) error
	// Clean reports nil when no run could tell the servers from fresh
	// ones, or an error that says what is left (a key, a row, a session).
	Clean(ctx context.Context) error
}

// Scrub resets what of a cluster lies beside its deployment and only a
// service's package can reach (the inventory node, a redis-server), and
// checks that it is back to its start: a Pool's hook.
type Scrub func(ctx context.Context, c *Cluster) error

// ErrPoolClosed is what Take returns once its Pool is closed.
var ErrPoolClosed = errors.New("cluster: pool closed")

// resetTime bounds one reset: a deployment whose reset takes longer is
// stopped, as one that fails.
const resetTime = 30 * time.Second

// Pool keeps warm deployments between runs: a run Takes a cluster and
// Puts it back, and the Pool resets it in the background, so that the
// next Take of the same Config finds it ready rather than starting the
// servers again. A cluster whose run struck a server (Put with reuse
// false), whose deployment is no Resetter, or whose reset fails or leaves
// something behind is closed instead, and the next Take starts a fresh
// one. Its methods may be called from several goroutines.
type Pool struct {
	scrub Scrub

	bg     context.Context // the background resets'; Close cancels it
	cancel context.CancelFunc
	work   sync.WaitGroup // background resets and closes

	mu        sync.Mutex
	closed    bool
	idle      map[string][]*Cluster // reset and checked, by poolKey
	resetting map[string]int        // resets under way, by poolKey
	changed   chan struct{}         // closed and replaced when idle or resetting change
	stats     PoolStats
	errs      []error // of the closes in the background, for Close
}

// PoolStats counts what a Pool did.
type PoolStats struct {
	Started   int // clusters started fresh by Take
	Reused    int // clusters Take handed out again after a reset
	Discarded int // clusters closed rather than reused
}

// NewPool makes an empty pool; scrub, when not nil, resets what lies
// beside each deployment after every run (see Scrub).
func NewPool(scrub Scrub) *Pool {
	bg, cancel := context.WithCancel(context.Background())
	return &Pool{scrub: scrub, bg: bg, cancel: cancel, idle: map[string][]*Cluster{},
		resetting: map[string]int{}, changed: make(chan struct{})}
}

// poolKey is what makes two clusters interchangeable, or "" when a
// cluster of cfg is never reused: one whose SQL inventory lives on a
// server beside the lock service, which no reset reaches.
func poolKey(cfg Config) string {
	topo := cfg.Topology
	if topo == "" {
		topo = Single
	}
	if s := topo.Service(); cfg.Resource != nil && s != MariaDB && s != PostgreSQL {
		return ""
	}
	return fmt.Sprintf("%s|%s|%T|%T%+v|%T", topo, cfg.Persistence, cfg.Resource, cfg.Backend, cfg.Backend, cfg.Service)
}

// Take hands out a cluster of cfg: a reset one if the pool keeps one, or
// waits for a reset under way, or else starts a fresh one. A kept
// cluster that is not Clean is closed, and the next one tried.
func (p *Pool) Take(ctx context.Context, cfg Config) (*Cluster, error) {
	key := poolKey(cfg)
	for key != "" {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrPoolClosed
		}
		if n := len(p.idle[key]); n > 0 {
			c := p.idle[key][n-1]
			p.idle[key] = p.idle[key][:n-1]
			p.mu.Unlock()
			if err := c.clean(ctx); err != nil {
				p.discard(c)
				continue
			}
			p.count(func(s *PoolStats) { s.Reused++ })
			c.kept.pool()
			c.reused = true
			return c, nil
		}
		if p.resetting[key] == 0 {
			p.mu.Unlock()
			break
		}
		// A reset is cheaper than a start: wait for it.
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		}
	}
	c, err := Start(ctx, cfg)
	if err == nil && key != "" {
		c.kept.pool()
	}
	if err == nil {
		p.count(func(s *PoolStats) { s.Started++ })
	}
	return c, err
}

// Put gives c back after its run. With reuse false (its run struck a
// server, or failed before it healed), or when c's deployment is no
// Resetter, c is closed; else it is reset in the background and kept for
// the next Take of its Config.
func (p *Pool) Put(c *Cluster, reuse bool) {
	key := poolKey(c.config)
	_, resets := c.deployment.(Resetter)
	p.mu.Lock()
	if !reuse || !resets || key == "" || p.closed {
		p.mu.Unlock()
		p.discard(c)
		return
	}
	p.resetting[key]++
	p.work.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.work.Done()
		ctx, cancel := context.WithTimeout(p.bg, resetTime)
		err := p.reset(ctx, c)
		cancel()
		p.mu.Lock()
		p.resetting[key]--
		keep := err == nil && !p.closed
		if keep {
			p.idle[key] = append(p.idle[key], c)
		}
		p.broadcast()
		p.mu.Unlock()
		if !keep {
			p.discard(c)
		}
	}()
}

// reset makes c fresh: a new network (the old one's links, toxics and
// connections all gone with it), its deployment Reset, and the scrub.
func (p *Pool) reset(ctx context.Context, c *Cluster) error {
	if err := c.network.Close(); err != nil {
		return fmt.Errorf("reset: close the network: %w", err)
	}
	var err error
	if c.network, err = network.Start(ctx); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	if err := c.deployment.(Resetter).Reset(ctx); err != nil {
		return fmt.Errorf("reset %s: %w", c.topology, err)
	}
	if p.scrub != nil {
		if err := p.scrub(ctx, c); err != nil {
			return fmt.Errorf("reset %s: %w", c.topology, err)
		}
	}
	return c.clean(ctx)
}

// clean reports nil when every server of c is up and its deployment is
// Clean.
func (c *Cluster) clean(ctx context.Context) error {
	for _, n := range append(c.LockNodes(), c.inventory) {
		if !n.Running() {
			return fmt.Errorf("%s is down", n.Name())
		}
	}
	r, ok := c.deployment.(Resetter)
	if !ok {
		return fmt.Errorf("topology %s cannot be reset", c.topology)
	}
	return r.Clean(ctx)
}

// discard closes c, in the background while the pool is open; Close
// reports its error.
func (p *Pool) discard(c *Cluster) {
	p.mu.Lock()
	p.stats.Discarded++
	if p.closed { // Close may be waiting for the work: no more of it
		p.mu.Unlock()
		if err := c.Close(); err != nil {
			p.mu.Lock()
			p.errs = append(p.errs, err)
			p.mu.Unlock()
		}
		return
	}
	p.work.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.work.Done()
		if err := c.Close(); err != nil {
			p.mu.Lock()
			p.errs = append(p.errs, err)
			p.mu.Unlock()
		}
	}()
}

// broadcast wakes every Take waiting for a reset; p.mu is held.
func (p *Pool) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// count updates the stats under p.mu.
func (p *Pool) count(f func(*PoolStats)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.stats)
}

// Stats says what the pool did so far.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Close stops the resets under way and closes every cluster the pool
// keeps, and returns once all are gone: nothing it started outlives it.
// Take then fails, and Put closes what it is given.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	p.cancel()
	p.broadcast()
	p.mu.Unlock()
	p.work.Wait() // resets end and discard what they reset
	p.mu.Lock()
	var kept []*Cluster
	for key, cs := range p.idle {
		kept = append(kept, cs...)
		delete(p.idle, key)
	}
	errs := p.errs
	p.errs = nil
	p.mu.Unlock()
	// At once, as Kept closes what each holds: the end of an exploration
	// waits for the slowest, not for their sum.
	return errors.Join(append(errs, closeAll(kept))...)
}
