package harness

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/history"
)

// ErrCrashed is returned by everything a client does after it crashed.
var ErrCrashed = errors.New("client crashed")

// ErrNotSent is the crash hook refusing a command before it left the client.
var ErrNotSent = fmt.Errorf("%w: command not sent", ErrCrashed)

// Client is one simulated application process: its own handle to the lock
// service (through its own network links, dialled by the service's
// package), its own clock, its own failpoints. Lock
// code gets nothing else.
type Client struct {
	id        int
	ttl       time.Duration
	timeout   time.Duration // Redis read timeout: how long a lost reply keeps it waiting
	key       string        // the workload's lock key, to tell which command took it
	keyOf     func() string // the key the lock's requests showed (ClientOptions.KeyOf); nil: key
	inventory InventoryConn // nil when the client was given no InventoryDialer
	db        *sql.DB       // the inventory in MariaDB or PostgreSQL, when it lives there
	shared    bool          // handle (and db) are the service's shared pool's, which the client does not close
	history   *history.Recorder
	points    *failpoint.Set

	// handle is the client's handle to a service started through the
	// seam (service.go).
	handle Handle

	ctx    context.Context // ends when the client crashes or the run ends
	cancel context.CancelFunc
	wg     sync.WaitGroup

	skew    atomic.Int64 // added to the wall clock, in nanoseconds
	crashed atomic.Bool

	mu      sync.Mutex
	resume  chan struct{} // non-nil while paused; closed when the pause ends
	process Process       // the client's own process, when the lock is a program (Attach)

	endpoints Endpoints     // what it dials, for a lock program's environment
	kept      *cluster.Kept // what the deployment keeps between its runs (Kept)

	phase atomic.Pointer[phaseRun] // the worker's phase, for commands whose context has none

	probe KeyReader // locklab's own reads of the lock key, past the client's links: see keyWatch
}

// clientConfig is what newClient needs: the addresses this client dials
// (already through its links) and the run it belongs to.
type clientConfig struct {
	id        int
	ttl       time.Duration
	key       string // the workload's lock key; "" means "lock"
	keyOf     func() string
	inventory string // the inventory node, direct: no fault touches it
	// stock dials the client's connection to inventory, when not nil.
	stock InventoryDialer
	// stockDriver and stockDSN reach the SQL inventory (MariaDB or
	// PostgreSQL), when it lives there, past any link.
	stockDriver, stockDSN string
	shared                Handle // the service's shared pool, used in place of a handle of its own and stockDSN when not nil
	// service dials the handle of a service started through the seam, to
	// the lock nodes at serviceAddrs (through this client's links).
	service      Dialer
	serviceAddrs []string
	timeout      time.Duration
	history      *history.Recorder
	points       *failpoint.Set
	kept         *cluster.Kept
}

func newClient(ctx context.Context, cfg clientConfig) *Client {
	if cfg.key == "" {
		cfg.key = "lock"
	}
	c := &Client{id: cfg.id, ttl: cfg.ttl, timeout: cfg.timeout, key: cfg.key, keyOf: cfg.keyOf, history: cfg.history, points: cfg.points, kept: cfg.kept}
	c.ctx, c.cancel = context.WithCancel(ctx)
	if cfg.stock != nil {
		c.inventory = cfg.stock.DialInventory(c, cfg.inventory)
	}
	if cfg.service != nil {
		c.dialService(cfg)
	}
	if cfg.stockDSN != "" && c.db == nil {
		c.db = openDB(cfg.stockDriver, cfg.stockDSN)
	}
	return c
}

// dialService gives the client its endpoints on the service started
// through the seam, and its handle: the service's shared pool when it has
// one, which also carries the SQL inventory's statements, or its own.
func (c *Client) dialService(cfg clientConfig) {
	c.endpoints = Endpoints{Env: cfg.service.Env(c, cfg.serviceAddrs)}
	if e, ok := cfg.service.(Endpointed); ok {
		c.endpoints = e.Endpoints(c, cfg.serviceAddrs)
	}
	if p, ok := cfg.service.(Prober); ok {
		c.probe = p.Probe(c)
	}
	if cfg.shared != nil {
		// One service's one pool, for the lock and the inventory alike;
		// a Sharer's view of it is the client's own, its pool's not.
		c.handle, c.shared = cfg.shared, true
		if s, ok := cfg.shared.(Sharer); ok {
			c.handle = s.Share(c)
		}
		if p, ok := cfg.shared.(Pooled); ok && cfg.stockDSN != "" {
			c.db = p.DB()
		}
		return
	}
	var err error
	if c.handle, err = cfg.service.Dial(c, cfg.serviceAddrs); err != nil {
		c.spoilf("client %d: %v", c.id, err)
	}
}

// openDB opens a client's own connection pool to the SQL inventory; driver
// is "mysql" or "pgx" (Database.Driver), both registered by the SQL
// services' package (service/sqldb), whose resource started the server.
func openDB(driver, dsn string) *sql.DB {
	db, _ := sql.Open(driver, dsn) // only fails for an unknown driver name
	db.SetMaxOpenConns(2)
	return db
}

// ID is the client's number, from 0.
func (c *Client) ID() int { return c.id }

// TTL is the lease time the scenario asks locks to use. A lock may choose its
// own, but the scenario's faults (pauses past the TTL, slow work) are timed
// against this one.
func (c *Client) TTL() time.Duration { return c.ttl }

// Inventory is the client's connection to the inventory node, which no
// fault touches: the workload's resource, not the lock's; nil when the
// client was made with no InventoryDialer (ClientOptions.Inventory).
func (c *Client) Inventory() Inventory {
	if c.inventory == nil {
		return nil
	}
	return c.inventory
}

// DB is the client's pool on the SQL inventory (MariaDB, or PostgreSQL on
// the postgres topology), past any link, or nil when the inventory is not
// in SQL.
func (c *Client) DB() *sql.DB { return c.db }

// Now is this client's wall clock, which a scenario can skew.
func (c *Client) Now() time.Time {
	return time.Now().Add(time.Duration(c.skew.Load()))
}

// SetSkew moves this client's wall clock by d from now on; a client's
// process (Attach) has its own clock moved, or the run is spoiled.
func (c *Client) SetSkew(d time.Duration) {
	c.skew.Store(int64(d))
	if p := c.attached(); p != nil {
		c.skewProcess(p, d)
	}
}

// failpoint.Point runs whatever the scenario armed at name for this client: a crash,
// a pause, a sleep or a fault. It returns ErrCrashed if the client crashed
// there, and ctx's error if the run ended while it waited.
func (c *Client) Failpoint(ctx context.Context, name string) error {
	if c.crashed.Load() {
		return ErrCrashed
	}
	c.points.EndHolds(name, c.id)
	actions := c.points.Hit(name, c.id)
	if len(actions) == 0 {
		return nil
	}
	// The run waits for these actions before it stops the workload, so
	// that the story they tell ends while the other clients still cycle.
	defer c.points.Done()
	at := failpoint.At{Name: name, Client: c.id, Words: name}
	if pr := c.phaseOf(ctx); pr != nil {
		at.Phase = pr.phase
	}
	for _, a := range actions {
		if err := c.act(ctx, at, a); err != nil {
			return err
		}
	}
	return nil
}

// onClient is the record of a fault of the kind called kind that a
// failpoint's action does to this client at at.
func (c *Client) onClient(kind string, at failpoint.At, a failpoint.Action) history.Op {
	return at.Record(history.Op{Client: c.id, Kind: history.KindFault, FaultKind: kind,
		Target: &history.Target{Type: history.TargetClient}, Crux: a.Crux})
}

// act does one failpoint action, reached at at.
func (c *Client) act(ctx context.Context, at failpoint.At, a failpoint.Action) error {
	name := at.Words
	switch {
	case a.Kind == failpoint.ActionCrash:
		c.crash("failpoint "+name, at.Record(history.Op{Crux: a.Crux}))
		return ErrCrashed
	case a.Kind == failpoint.ActionPause && a.Until != "":
		return c.pause(ctx, a.For, "failpoint "+name+": until another client reaches "+a.Until, c.until(a.Until), at.Record(history.Op{Crux: a.Crux}))
	case a.Kind == failpoint.ActionPause:
		return c.pause(ctx, a.For, "failpoint "+name, func(ctx context.Context) { <-ctx.Done() }, at.Record(history.Op{Crux: a.Crux}))
	case a.Kind == failpoint.ActionHold:
		return c.hold(ctx, at, a)
	case a.Kind == failpoint.ActionFault:
		start := c.history.Now()
		c.points.Inject(a, at)
		// The wait is recorded so that a checker can tell it from the
		// scenario's faults: a restart slowed by a loaded machine must not
		// pass for a holder that outlived its lease by the lock's fault.
		end := c.history.Now()
		op := c.onClient(a.Fault.About().Name, at, failpoint.Action{})
		op.Call, op.Return, op.Part, op.Fault, op.Effect = start, end, history.PartInjection, history.FaultInjecting, history.EffectHarness
		op.Detail = fmt.Sprintf("failpoint %s: %s took %s", name, a.Fault, (end - start).Round(time.Millisecond))
		c.history.Add(op)
		return nil
	default:
		return c.slow(ctx, at, a)
	}
}

// slow is a sleep at a failpoint: only the calling goroutine waits, for
// a.For or until another client reaches a.Until. It is recorded as a fault
// on the client's row.
func (c *Client) slow(ctx context.Context, at failpoint.At, a failpoint.Action) error {
	// A delayed command stands for a slow network or a stalled client; a
	// slow critical section is the workload's own time.
	name := at.Words
	label, effect := history.FaultSlowWork, history.EffectWork
	if failpoint.IsCommandPoint(at.Name) {
		label, effect = "delayed command", history.EffectDelay
	}
	op := c.onClient(failpoint.ActionKindName(a.Kind, at.Name), at, a)
	op.Call, op.Fault, op.Effect = c.history.Now(), label, effect
	c.history.Begin(op)
	var err error
	if a.Until != "" {
		wctx, cancel := context.WithTimeout(ctx, a.For)
		c.until(a.Until)(wctx)
		cancel()
		if err = ctx.Err(); c.crashed.Load() {
			err = ErrCrashed
		}
	} else {
		err = c.Sleep(ctx, a.For)
	}
	op.Return = c.history.Now()
	op.Detail = fmt.Sprintf("failpoint %s: %s, lasted %s", name, a, (op.Return - op.Call).Round(time.Millisecond))
	c.history.Add(op)
	return err
}

// Go runs f in the background, as a real process runs a watchdog thread. The
// context passed to f ends when the client crashes or the run ends; the
// commands sent with it are in failpoint.PhaseBackground.
func (c *Client) Go(f func(ctx context.Context)) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f(withPhase(c.ctx, failpoint.PhaseBackground))
	}()
}

// Sleep waits for d, or until ctx ends or the client crashes.
func (c *Client) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		if c.crashed.Load() {
			return ErrCrashed
		}
		return c.ctx.Err()
	}
}

// Crash stops the client for good: its connections close, its background work
// is cancelled and no cleanup runs, so whatever it held stays held.
func (c *Client) Crash(why string) { c.crash(why, history.Op{}) }

// crash is Crash, recorded as rec: the scenario's crux when its Crux is
// set, and where a failpoint struck when one did.
func (c *Client) crash(why string, rec history.Op) {
	if c.crashed.Swap(true) {
		return
	}
	at := c.history.Now()
	if p := c.attached(); p != nil {
		// The process dies first, so that it sends nothing once crashed.
		if err := p.Kill(); err != nil {
			c.spoilf("crash of client %d did not kill its process: %v", c.id, err)
		}
	}
	c.cancel()
	c.closeConns()
	rec.Client, rec.Kind, rec.Call, rec.Return, rec.Detail = c.id, history.KindCrash, at, at, why
	c.history.Add(rec)
}

// Crashed reports whether the client has crashed.
func (c *Client) Crashed() bool { return c.crashed.Load() }

// Pause stops the world for this client for d: every Redis command it issues,
// its watchdog's included, blocks until the pause ends, as in a long GC pause.
// The caller waits out the pause too.
func (c *Client) Pause(ctx context.Context, d time.Duration, why string) error {
	return c.pause(ctx, d, why, func(ctx context.Context) { <-ctx.Done() }, history.Op{})
}

// pause stops the world for this client until wait returns or d passed;
// it is recorded as rec: the fault the scenario is about when its Crux is
// set, and where a failpoint struck when one did.
func (c *Client) pause(ctx context.Context, d time.Duration, why string, wait func(ctx context.Context), rec history.Op) error {
	c.mu.Lock()
	if c.resume != nil {
		c.mu.Unlock()
		return c.waitResumed(ctx)
	}
	resume := make(chan struct{})
	c.resume = resume
	c.mu.Unlock()

	start := c.history.Now()
	rec.Client, rec.Kind, rec.Call, rec.Fault, rec.Effect = c.id, history.KindFault, start, "client pause", history.EffectDelay
	rec.FaultKind, rec.Target = failpoint.ActionKindName(failpoint.ActionPause, ""), &history.Target{Type: history.TargetClient}
	rec.Detail = why
	c.history.Begin(rec)
	p := c.attached()
	if p != nil {
		if err := p.Stop(); err != nil {
			c.spoilf("pause of client %d did not stop its process: %v", c.id, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	wait(wctx)
	cancel()
	if p != nil {
		if err := p.Continue(); err != nil {
			c.spoilf("pause of client %d: its process did not continue: %v", c.id, err)
		}
	}
	err := ctx.Err()
	if c.crashed.Load() {
		err = ErrCrashed
	}
	c.mu.Lock()
	c.resume = nil
	close(resume)
	c.mu.Unlock()
	end := c.history.Now()
	rec.Return, rec.Detail = end, fmt.Sprintf("%s: stop-the-world pause of %s", why, (end-start).Round(time.Millisecond))
	c.history.Add(rec)
	return err
}

// until returns a wait that ends once another client reaches failpoint name.
func (c *Client) until(name string) func(ctx context.Context) {
	return func(ctx context.Context) { c.points.AwaitOther(ctx, name, c.id) }
}

// waitResumed blocks while the client is paused.
func (c *Client) waitResumed(ctx context.Context) error {
	c.mu.Lock()
	resume := c.resume
	c.mu.Unlock()
	if resume == nil {
		return nil
	}
	select {
	case <-resume:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return ErrCrashed
	}
}

func (c *Client) closeConns() {
	if c.handle != nil && !c.shared {
		c.handle.Close()
	}
	if c.inventory != nil {
		c.inventory.Close()
	}
	if c.db != nil && !c.shared {
		c.db.Close()
	}
}

// Close ends the client and waits for its background work.
func (c *Client) Close() {
	c.cancel()
	if p := c.attached(); p != nil {
		p.Close()
	}
	c.wg.Wait()
	if !c.crashed.Load() {
		c.closeConns()
	}
	if c.probe != nil {
		c.probe.Close()
	}
}

// around runs one command. A paused process neither sends nor acts on a
// reply, so the pause is awaited on both sides of the command.
func (c *Client) around(ctx context.Context, send func() error) error {
	if err := c.waitResumed(ctx); err != nil {
		return err
	}
	if c.crashed.Load() {
		return ErrNotSent
	}
	err := send()
	if werr := c.waitResumed(ctx); werr != nil {
		return werr
	}
	if c.crashed.Load() {
		return ErrCrashed
	}
	return err
}
