package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/runner/lag"
	"github.com/locklab/locklab/service"
	redisservice "github.com/locklab/locklab/service/redis"
)

// Options tune one run.
type Options struct {
	Seed    int64 // seeds the clients' retry jitter; 0 means 1
	Clients int   // overrides the scenario's client count when > 0
	// Duration overrides how long the workload runs when > 0.
	Duration time.Duration
	Dir      string    // where the run's files go; "" writes nothing
	Lock     string    // the lock's name, for the report
	Log      io.Writer // progress lines; nil for none
	// Backend starts the servers; nil means local processes.
	Backend cluster.Backend
	// Reference is a correct lock of the same kind, put through the same
	// scenario with the same seed when the run fails a checker, to tell the
	// lock's own failures from the fault's inherent ones (Check.Kind). Nil
	// means the reference lock of the scenario's topology and nesting
	// (reference.For: the watchdog token lock, the reentrant lock, Redlock); a
	// user may pass their lock's bug-free twin instead.
	Reference harness.NewLocker
	// ReferenceRuns is how many times the reference may run when the
	// history alone cannot tell a failure's kind: own by comparison needs
	// it ok in every one, and the runs stop at the first that fails. 0
	// means DefaultReferenceRuns; a negative count runs no reference at
	// all, so failing verdicts the history cannot decide stay untold: what
	// a lock that is its own reference needs, as a run of it that stays ok
	// only raced differently.
	ReferenceRuns int
	// SelfReference says Reference is the lock itself: a reference run
	// that fails too shows a failure inherent, as any correct lock's
	// would; one that stays ok only raced differently, never own.
	SelfReference bool
	// ReferenceOf, when set, chooses the reference by the kind of the
	// lock's hold, in place of Reference: Kind, or else the kind the
	// lock's own requests showed (a lock program's footprint). A lock
	// whose requests showed contradictory things is then compared with
	// none: its failures the history cannot decide stay untold.
	ReferenceOf func(footprint.Kind) harness.NewLocker
	// Kind is where the lock's hold lives, as the user says it (check
	// -kind), over what its requests showed; Unknown leaves it to them.
	Kind footprint.Kind
	// Lease is the lease the lock's runs are timed against, given or
	// shared among the runs of one lock so that a lease one learned times
	// the next; nil learns one for this run alone (see Run).
	Lease *footprint.Lease
	// Watch, when set, is told of the run's operations as they happen
	// (history.Watcher), for a live view; the reference lock's runs are not
	// told to it.
	Watch history.Watcher
	// Pool, when set, hands the run its cluster and takes it back: a
	// warm deployment, reset since its last run, in place of one started
	// for this run alone (cluster.Pool). The run gives it back for reuse
	// only when it ended and none of its faults struck a server
	// (fault.Kind.SparesServers). Nil starts and stops a cluster per run.
	Pool *cluster.Pool
}

// Result is what one run found.
type Result struct {
	Scenario string                     `json:"scenario"`
	Lock     string                     `json:"lock"`
	Seed     int64                      `json:"seed"`
	Verdicts map[string]checker.Verdict `json:"verdicts"`
	Checks   []checker.Check            `json:"checks"`
	// Detect is when the first violation became visible, since the start.
	Detect   *time.Duration `json:"detect_ns"`
	Duration time.Duration  `json:"duration_ns"`
	Stats    checker.Stats  `json:"stats"`
	Faults   []string       `json:"faults"` // honest labels of what was injected
	// Spoiled says what of the scenario did not happen (a failpoint
	// that never fired, a fault never injected); every verdict is then
	// unknown. Saved as not_exercised before (reports reads both).
	Spoiled []string `json:"spoiled,omitempty"`
	// Missed says why the fault the scenario is about (its Crux failpoint),
	// or a drawn one, never struck the lock; the verdicts stand, but say
	// nothing of that fault. Saved as unmet before (reports reads both).
	Missed []string `json:"missed,omitempty"`
	Dir    string   `json:"dir,omitempty"`
	// Reference holds the verdicts of Options.Reference in the same
	// scenario and seed, when a failing verdict made it run: those of its
	// last run, the one that failed if one did.
	Reference map[string]checker.Verdict `json:"reference,omitempty"`
	// ReferenceRuns is how many times the reference ran.
	ReferenceRuns int `json:"reference_runs,omitempty"`
	// Timing says what the run's lease-timed lengths were timed against:
	// a lease given or learned, or the scenario's own TTL; nil for a lock
	// that learns nothing of itself and was given no lease (a Go lock, told
	// its TTL).
	Timing *Timing `json:"timing,omitempty"`
}

// Late is the first verdict of r that the machine made unknown by
// running the harness late (checker.Check.Late), or nil: such a run
// says nothing of the lock and is worth making again.
func (r *Result) Late() *checker.Check {
	for i, c := range r.Checks {
		if c.Late() {
			return &r.Checks[i]
		}
	}
	return nil
}

// Files a run writes to Options.Dir.
const (
	HistoryFile  = "history.jsonl"
	ResultFile   = "result.json"
	LockFile     = checker.LockFile
	ResourceFile = checker.ResourceFile
)

// Run puts the lock built by newLocker through scenario s and checks what the
// clients saw. Every process, link and temporary file it made is gone when it
// returns, also when ctx is cancelled (then it returns ctx's error). A run
// that ran returns its result and a nil error, also when the scenario did
// not happen as written: then every verdict is unknown and
// Result.Spoiled says what did not happen. An error means the run
// could not run or could not be judged, and comes with no result.
//
// The run is timed against Options.Lease where it knows a longer lease
// than s's TTL (Scenario.Stretch). Otherwise a lock that learns its
// footprint (a lock program) is run on s as it is, and when its requests
// show a lease that outlasts s's TTL, the run is made again on s
// stretched to that lease, the first set aside in LearnDir;
// Result.Timing says which.
func Run(ctx context.Context, s Scenario, newLocker harness.NewLocker, opts Options) (*Result, error) {
	lease := opts.Lease
	if lease == nil {
		lease = &footprint.Lease{} // learned by this run, for its own second try
	}
	var learns atomic.Bool
	watched := func(c *harness.Client) harness.Locker {
		l := newLocker(c)
		if _, ok := l.(harness.Footprinter); ok {
			learns.Store(true)
		}
		return l
	}
	timed, timing, known := timeAgainst(lease, s)
	res, ops, err := runOps(ctx, timed, watched, timing.scaled(opts))
	if err != nil || !learns.Load() && !known {
		return res, err // a Go lock, told its TTL: nothing to say
	}
	fp := learned(ops)
	if !known || timing.Source == TimedScenario {
		lease.Learn(fp, timed.Workload.withDefaults().TTL)
		if again, t, ok := timeAgainst(lease, s); ok && t.Source != TimedScenario {
			logf(opts.Log, "%s: %s; made again", s.Name, t.Text)
			if err := setAside(opts.Dir); err != nil {
				return nil, fmt.Errorf("run %s: %w", s.Name, err)
			}
			if res, ops, err = runOps(ctx, again, newLocker, t.scaled(opts)); err != nil {
				return nil, err
			}
			timing, fp = t, learned(ops)
		}
	}
	if learns.Load() {
		describe(timing, fp)
	}
	res.Timing = timing
	if opts.Dir != "" {
		err = writeJSON(filepath.Join(opts.Dir, ResultFile), res)
	}
	return res, err
}

// runOps is Run, also handing back the run's history (nil when it has
// none), so that the classifier can judge a reference run's overlaps
// without reading a file.
func runOps(ctx context.Context, s Scenario, newLocker harness.NewLocker, opts Options) (*Result, []history.Op, error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	if opts.Clients < 0 || opts.Duration < 0 {
		return nil, nil, fmt.Errorf("run %s: negative client count or duration", s.Name)
	}
	if opts.Duration > 0 && opts.Duration < s.MinDuration {
		return nil, nil, fmt.Errorf("run %s: a workload of %s is too short for this scenario's story; it needs at least %s",
			s.Name, opts.Duration, s.MinDuration)
	}
	w := s.Workload
	if opts.Clients > 0 {
		w.Clients = opts.Clients
	}
	if opts.Duration > 0 {
		w.Duration = opts.Duration
	}
	w = w.withDefaults()
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Reference == nil {
		_, opts.Reference = reference.For(s.Topology, s.Workload.Nested)
	}
	if opts.Dir != "" {
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", s.Name, err)
		}
	}
	started := time.Now()
	backend := opts.Backend
	if backend == nil {
		backend = local.Local{}
	}
	cl, err := takeCluster(ctx, opts.Pool, cluster.Config{Topology: s.Topology, Persistence: s.Persistence,
		Resource: w.Resource.service(), Backend: backend,
		Service: service.LockService(s.Topology)})
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", s.Name, err)
	}
	// The reference lock, if it runs, gets its own cluster; this one is closed (or given
	// back) first, and reused only once the run ended sparing every server.
	var spared bool
	closeCluster := sync.OnceValue(func() error { return giveBack(opts.Pool, cl, spared) })
	defer closeCluster()
	logf(opts.Log, "%s: %s topology %s in %s", s.Name, cl.Topology(), cl.Origin(), time.Since(started).Round(time.Millisecond))

	historyPath := ""
	if opts.Dir != "" {
		historyPath = filepath.Join(opts.Dir, HistoryFile)
	}
	h, err := history.New(historyPath)
	if err != nil {
		return nil, nil, err
	}
	defer h.Close()
	h.Watch(opts.Watch)

	r := &run{s: s, w: w, opts: opts, cluster: cl, h: h, points: failpoint.NewSet(s.Failpoints)}
	if err := r.execute(ctx, newLocker); err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", s.Name, err)
	}
	if err := h.Close(); err != nil {
		return nil, nil, err
	}

	res := &Result{Scenario: s.Name, Lock: opts.Lock, Seed: opts.Seed, Dir: opts.Dir,
		Faults: r.faultLabels(), Duration: time.Since(started)}
	ops := h.Ops()
	checked := checker.Run(ops, checker.Options{Handover: s.Handover, Initial: w.Stock})
	res.Checks, res.Verdicts, res.Detect = checked.Checks, checked.Verdicts(), checked.Detect()
	res.Stats = checker.Measure(ops)
	if e := history.EndOf(ops); e != nil {
		res.Spoiled, res.Missed = e.Spoiled, e.Missed
	}
	spared = sparesServers(s, ops)
	closeCluster()
	if err := classify(ctx, s, opts, res, ops, checked); err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", s.Name, err)
	}
	if opts.Dir != "" {
		if err := checked.WriteVisualizations(opts.Dir, ops); err != nil {
			return nil, nil, err
		}
		if err := writeJSON(filepath.Join(opts.Dir, ResultFile), res); err != nil {
			return nil, nil, err
		}
	}
	logf(opts.Log, "%s: %s in %s", s.Name, checked.Summary(), res.Duration.Round(time.Millisecond))
	return res, ops, nil
}

// run is the state of one Run.
type run struct {
	s       Scenario
	w       Workload
	opts    Options
	cluster *cluster.Cluster
	h       *history.Recorder
	points  *failpoint.Set
	// locks are the workload's clients' locks, once made: what their
	// requests showed of the lock is read from them (footprint).
	locks atomic.Pointer[[]harness.Locker]
}

// execute starts the clients, runs the workload under the scenario's
// faults, lets the clients finish, probes liveness and records the end.
func (r *run) execute(ctx context.Context, newLocker harness.NewLocker) error {
	if err := r.setupInventory(ctx); err != nil {
		return fmt.Errorf("set up inventory: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	env := fault.NewEnv(r.cluster, r.h)
	env.Key = r.lockKey
	var shared harness.Handle
	if r.w.Pool > 0 {
		var err error
		if shared, err = service.OpenSharedPool(runCtx, r.cluster, r.w.Pool, r.w.Timeout); err != nil {
			return err
		}
		defer shared.Close() // after every client closed: deferred first
	}
	clients, err := r.join(runCtx, env, shared) // the workload's, then the probe
	defer func() {
		for _, c := range slices.Backward(clients) {
			c.Close()
		}
	}()
	if err != nil {
		return err
	}
	probe := clients[r.w.Clients]
	clients = clients[:r.w.Clients]
	r.points.Start(runCtx, env)

	var stop atomic.Bool
	workers := make([]*worker, r.w.Clients)
	locks := make([]harness.Locker, len(clients))
	for id, c := range clients {
		workers[id] = r.newWorker(c, newLocker, &stop)
		locks[id] = workers[id].lock
		if shared != nil && c.Program() {
			c.Spoil(fmt.Sprintf("client %d is a lock program, with connections of its own: it cannot share the service's pool of %d", id, r.w.Pool))
		}
	}
	r.locks.Store(&locks)
	unwatch := service.WatchLock(runCtx, r.cluster.Deployment(), r.h, r.w.Key) // the servers' side, drained before the end record
	meter := lag.Start(runCtx, r.h.Now, r.pids(slices.Concat(clients, []*harness.Client{probe})))
	defer meter.Stop()
	warm(runCtx, workers...)
	var wg sync.WaitGroup
	for id := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			workers[id].run(runCtx)
		}()
	}
	faultsDone, notInjected := r.schedule(runCtx, env)
	logf(r.opts.Log, "%s: %d clients running for %s", r.s.Name, r.w.Clients, r.w.Duration)

	if err := r.wait(ctx); err != nil {
		cancel()
		wg.Wait()
		faultsDone()
		r.points.HealAll()
		return err
	}
	stop.Store(true)
	bound := r.w.bound()
	stopped := make(chan struct{})
	go func() {
		wg.Wait()
		close(stopped)
	}()
	finished, waited, waitLate := meter.Wait(ctx, stopped, bound)
	var stuck []int
	if !finished {
		stuck = inCycle(workers)
	}
	heals := errors.Join(faultsDone(), r.points.HealAll())
	if err := ctx.Err(); err != nil {
		return err
	}

	logf(r.opts.Log, "%s: probing liveness (bound %s)", r.s.Name, bound)
	end := &history.End{Initial: r.w.Stock, Stuck: stuck, Bound: bound, Waited: waited, WaitLate: waitLate, TTL: r.w.TTL, Work: r.w.Work,
		Timed:   r.cluster.Topology() == cluster.Redlock,
		Spoiled: append(r.points.Unfired(), notInjected()...)}
	r.probe(runCtx, meter, probe, newLocker, bound, end)
	r.account(end)
	if err := r.readEnd(ctx, end); err != nil {
		return err
	}
	end.Late, end.Queued = meter.Stop(), meter.Queued()
	unwatch()
	r.h.Add(history.Op{Client: -1, Kind: history.KindEnd, Call: r.h.Now(), Return: r.h.Now(), End: end})

	cancel()
	if !waitFor(stopped, 10*time.Second) {
		return errors.New("clients did not stop within 10 s of the end of the run")
	}
	return heals
}

// account records in end what became of the scenario's failpoints, and
// what the lock's own requests showed of it.
func (r *run) account(end *history.End) {
	end.Spoiled = append(end.Spoiled, r.points.SpoiledBy()...)
	end.Missed = r.points.Missed(func(client int) string { return history.Refusals(r.h.Ops(), client) })
	// A drawn fault at a program's requests that no relay reads: said so,
	// never passed over as if it had struck.
	end.Missed = append(end.Missed, r.points.MissedDrawn()...)
	end.Fired = r.points.Fired()
	if fp, ambiguous := r.footprint(); fp != (footprint.Footprint{}) || len(ambiguous) > 0 {
		end.Footprint, end.Ambiguous = &fp, ambiguous
	}
}

// footprint is what the locks' own requests showed of the lock, over
// every client (harness.Footprinter), and why any of it could not be told.
func (r *run) footprint() (footprint.Footprint, []string) {
	var l footprint.Learner
	var ambiguous []string
	var locks []harness.Locker
	if p := r.locks.Load(); p != nil {
		locks = *p
	}
	for _, lock := range locks {
		if fl, ok := lock.(harness.Footprinter); ok {
			fp, why := fl.Footprint()
			if fp != (footprint.Footprint{}) {
				l.Add(fp)
			}
			ambiguous = append(ambiguous, why...)
		}
	}
	return l.Footprint(), append(ambiguous, l.Ambiguous()...)
}

// lockKey is the lock's key on the servers: the one its requests showed, when they
// showed one that names the workload's key (a library's "lock:orders:KEY"), else the workload's.
func (r *run) lockKey() string {
	if fp, _ := r.footprint(); fp.Key != "" && footprint.Matches(fp.Key, r.w.Key) {
		return fp.Key
	}
	return r.w.Key
}

// inCycle lists the clients of workers still in a cycle: those a run
// that did not finish in time is stuck on.
func inCycle(workers []*worker) []int {
	var ids []int
	for _, wk := range workers {
		if wk.inCycle.Load() {
			ids = append(ids, wk.c.ID())
		}
	}
	return ids
}

// join makes the run's clients, each recorded in env with its links, and
// last the liveness probe, client r.w.Clients: a fresh process that only
// comes to the lock after the workload stopped. It returns those it made,
// also after an error, for the caller to close.
func (r *run) join(ctx context.Context, env *fault.Env, shared harness.Handle) ([]*harness.Client, error) {
	var clients []*harness.Client
	for id := 0; id <= r.w.Clients; id++ {
		opts := harness.ClientOptions{ID: id, TTL: r.w.TTL, Key: r.w.Key, KeyOf: r.lockKey, Timeout: r.w.Timeout, Service: service.For(r.cluster.Topology()),
			Inventory: redisservice.Inventory{}}
		if id < r.w.Clients {
			opts.Pool = shared
		}
		c, links, err := harness.Join(ctx, r.cluster, opts, r.h, r.points)
		if err != nil {
			return clients, err
		}
		clients = append(clients, c)
		if id < r.w.Clients {
			env.AddClient(c, links)
		}
	}
	return clients, nil
}

// pids reads the run's own processes, for its lag meter: its servers and
// its clients' lock programs.
func (r *run) pids(clients []*harness.Client) func() []int {
	return func() []int {
		pids := r.cluster.ServerPids()
		for _, c := range clients {
			if pid := c.ProcessPid(); pid > 0 {
				pids = append(pids, pid)
			}
		}
		return pids
	}
}

// Longest a run waits past its Duration for its failpoints to fire, and how
// long it goes on after the last one did.
const (
	failpointWait = 15 * time.Second
	settle        = 300 * time.Millisecond
)

// wait lets the workload run for its Duration and, if the scenario's
// failpoints have not all fired by then (the clients they target were
// unlucky in the race for the lock), until they have and a little after.
// Then it waits for every failpoint still acting (a pause until another
// client holds the lock, a failover awaited inside a critical section) to
// finish, so that the story ends while the other clients still cycle.
func (r *run) wait(ctx context.Context) error {
	if !sleepCtx(ctx, r.w.Duration) {
		return ctx.Err()
	}
	deadline, cancel := context.WithTimeout(ctx, failpointWait)
	defer cancel()
	select {
	case <-r.points.AllFired():
	default:
		select {
		case <-r.points.AllFired():
			if !sleepCtx(ctx, settle) {
				return ctx.Err()
			}
		case <-deadline.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			logf(r.opts.Log, "%s: failpoints never fired: %v", r.s.Name, r.points.Unfired())
		}
	}
	r.points.AwaitIdle(deadline)
	return ctx.Err()
}

func (r *run) newWorker(c *harness.Client, newLocker harness.NewLocker, stop *atomic.Bool) *worker {
	return &worker{c: c, lock: newLocker(c), w: r.w, h: r.h, stop: stop,
		rng: rand.New(rand.NewPCG(uint64(r.opts.Seed), uint64(c.ID())))}
}

// schedule runs the scenario's timed faults in the background. The first
// returned function heals whatever is still injected, waits, and reports heal
// errors; the second, called after it, lists the faults the run ended before
// injecting.
func (r *run) schedule(ctx context.Context, env *fault.Env) (healAll func() error, notInjected func() []string) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make([]error, len(r.s.Faults))
	injected := make([]bool, len(r.s.Faults))
	for i, sf := range r.s.Faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			injected[i], errs[i] = r.inject(ctx, env, sf)
		}()
	}
	healAll = func() error {
		cancel()
		wg.Wait()
		return errors.Join(errs...)
	}
	notInjected = func() []string {
		var never []string
		for i, sf := range r.s.Faults {
			if !injected[i] {
				never = append(never, fmt.Sprintf("fault %q, due at %s, was never injected: the run ended first", sf.Fault, sf.At))
			}
		}
		return never
	}
	return healAll, notInjected
}

// inject applies one scheduled fault and heals it when its time is up or the
// run ends, recording it in the history. It reports whether it injected.
func (r *run) inject(ctx context.Context, env *fault.Env, sf ScheduledFault) (bool, error) {
	if !sleepCtx(ctx, sf.At) {
		return false, nil
	}
	heal, err := fault.Apply(ctx, env, sf.Fault, history.Op{Crux: sf.Crux})
	if err != nil {
		return false, err
	}
	sleepCtx(ctx, sf.For)
	return true, heal()
}

// probe lets a fresh client try to take and give back the lock within bound
// of the machine's time (lag.Meter.Wait).
func (r *run) probe(ctx context.Context, meter *lag.Meter, c *harness.Client, newLocker harness.NewLocker, bound time.Duration, end *history.End) {
	if len(r.points.SpoiledBy()) > 0 {
		// Every verdict is unknown already; a broken lock program would
		// only make the probe wait for it.
		end.ProbeErr = "not tried: the run was spoiled"
		return
	}
	var never atomic.Bool
	wk := r.newWorker(c, newLocker, &never)
	wk.probe = true
	warm(ctx, wk)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan struct{})
	late := make(chan time.Duration, 1)
	// Read before the wait starts, so that ProbeWait is never shorter than
	// the wait that cut the probe off: the check must find the bound of the
	// machine's time passed wherever the wait found it passed. (Read after,
	// it once fell 7 ms short under load, and a stuck lock was unknown.)
	start := time.Now()
	go func() {
		ok, _, l := meter.Wait(ctx, got, bound)
		if !ok {
			cancel()
		}
		late <- l
	}()
	lease, ok := wk.acquire(pctx, false)
	end.ProbeWait = time.Since(start)
	close(got)
	end.ProbeLate = <-late
	if !ok {
		end.ProbeErr = fmt.Sprintf("no lock within %s", end.ProbeWait.Round(time.Millisecond))
		return
	}
	end.Probe = true
	wk.release(ctx, lease, false)
}

// readEnd records the stock left and the lock's state on its servers.
func (r *run) readEnd(ctx context.Context, end *history.End) error {
	stock, err := r.stock(ctx)
	if err != nil {
		return fmt.Errorf("read stock: %w", err)
	}
	end.Stock = stock
	state, err := r.cluster.LockState(ctx, r.lockKey())
	if err != nil {
		return err
	}
	end.Held, end.Expires, end.Left = state.Held, state.Expires, state.Left
	return nil
}

// setupInventory puts the starting stock where the workload will sell it.
func (r *run) setupInventory(ctx context.Context) error {
	if db := r.cluster.SQLInventory(); db != nil {
		return db.SetupInventory(ctx, r.w.Stock)
	}
	if r.w.Resource == EtcdResource {
		return r.setupEtcdStock(ctx)
	}
	return redisservice.SetStock(ctx, r.cluster, r.w.Stock)
}

// stock is what is left of the inventory.
func (r *run) stock(ctx context.Context) (int64, error) {
	if db := r.cluster.SQLInventory(); db != nil {
		return db.Stock(ctx)
	}
	if r.w.Resource == EtcdResource {
		return r.etcdStockLeft(ctx)
	}
	return redisservice.ReadStock(ctx, r.cluster)
}

func (r *run) faultLabels() []string {
	var labels []string
	for _, f := range r.s.Failpoints {
		labels = append(labels, "failpoint: "+f.String())
	}
	for _, f := range r.s.Faults {
		labels = append(labels, fmt.Sprintf("at %s %s: %s", f.At, lasting(f.For), f.Fault))
	}
	// Where the backend does a fault otherwise than the label says, say how.
	n, ok := r.opts.Backend.(cluster.FaultNoter)
	if !ok {
		return labels
	}
	notes := n.FaultNotes()
	var uses []cluster.Operation
	for _, fp := range r.s.Failpoints {
		uses = append(uses, fp.About().Uses...)
	}
	for _, f := range r.s.Faults {
		uses = append(uses, f.Fault.About().Uses...)
	}
	slices.Sort(uses)
	for _, op := range slices.Compact(uses) {
		if note, ok := notes[op]; ok && !slices.Contains(labels, note) {
			labels = append(labels, note)
		}
	}
	return labels
}

// waitFor waits for done at most d and reports whether it came.
func waitFor(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// sleepCtx waits d and reports whether ctx was still live at the end.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// warmUp bounds how long a lock may take to start (see Warmer).
const warmUp = 15 * time.Second

// warm waits, within warmUp, until the lock of every worker that is a
// Warmer is ready. A lock that is not is left to fail its run: it has
// spoiled it already.
func warm(ctx context.Context, workers ...*worker) {
	ctx, cancel := context.WithTimeout(ctx, warmUp)
	defer cancel()
	var wg sync.WaitGroup
	for _, wk := range workers {
		if w, ok := wk.lock.(harness.Warmer); ok {
			wg.Go(func() { w.Warm(ctx) })
		}
	}
	wg.Wait()
}
