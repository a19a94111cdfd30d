package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
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
}

// Result is what one run found.
type Result struct {
	Scenario string             `json:"scenario"`
	Lock     string             `json:"lock"`
	Seed     int64              `json:"seed"`
	Verdicts map[string]Verdict `json:"verdicts"`
	Checks   []Check            `json:"checks"`
	// Detect is when the first violation became visible, since the start.
	Detect   *time.Duration `json:"detect_ns"`
	Duration time.Duration  `json:"duration_ns"`
	Stats    Stats          `json:"stats"`
	Faults   []string       `json:"faults"` // honest labels of what was injected
	// Unfired lists failpoints that never fired: the scenario did not
	// happen as written, so its verdicts prove little.
	Unfired []string `json:"unfired,omitempty"`
	Dir     string   `json:"dir,omitempty"`
}

// Files a run writes to Options.Dir.
const (
	HistoryFile  = "history.jsonl"
	ResultFile   = "result.json"
	LockFile     = "lock.html"
	ResourceFile = "resource.html"
)

// Run puts the lock built by newLocker through scenario s and checks what the
// clients saw. Every process, link and temporary file it made is gone when it
// returns, also when ctx is cancelled (then it returns ctx's error).
func Run(ctx context.Context, s Scenario, newLocker NewLocker, opts Options) (*Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if opts.Clients < 0 || opts.Duration < 0 {
		return nil, fmt.Errorf("run %s: negative client count or duration", s.Name)
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
	if opts.Dir != "" {
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("run %s: %w", s.Name, err)
		}
	}
	started := time.Now()
	cluster, err := StartCluster(ctx, ClusterConfig{Topology: s.Topology, Persistence: s.Persistence, Resource: w.Resource})
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", s.Name, err)
	}
	defer cluster.Close()
	logf(opts.Log, "%s: %s topology started in %s", s.Name, cluster.Topology(), time.Since(started).Round(time.Millisecond))

	historyPath := ""
	if opts.Dir != "" {
		historyPath = filepath.Join(opts.Dir, HistoryFile)
	}
	h, err := NewHistory(historyPath)
	if err != nil {
		return nil, err
	}
	defer h.Close()

	r := &run{s: s, w: w, opts: opts, cluster: cluster, h: h, points: newFailpoints(s.Failpoints)}
	if err := r.execute(ctx, newLocker); err != nil {
		return nil, fmt.Errorf("run %s: %w", s.Name, err)
	}
	if err := h.Close(); err != nil {
		return nil, err
	}

	res := &Result{Scenario: s.Name, Lock: opts.Lock, Seed: opts.Seed, Dir: opts.Dir,
		Faults: r.faultLabels(), Duration: time.Since(started)}
	ops := h.Ops()
	checked := CheckHistory(ops, CheckOptions{Handover: s.Handover, Initial: w.Stock})
	res.Checks, res.Verdicts, res.Detect = checked.Checks, checked.verdicts(), checked.detect()
	res.Stats = stats(ops)
	if e := endRecord(ops); e != nil {
		res.Unfired = e.Unfired
	}
	if opts.Dir != "" {
		if err := checked.writeVisualizations(opts.Dir, ops); err != nil {
			return nil, err
		}
		if err := writeJSON(filepath.Join(opts.Dir, ResultFile), res); err != nil {
			return nil, err
		}
	}
	logf(opts.Log, "%s: %s in %s", s.Name, checked.summary(), res.Duration.Round(time.Millisecond))
	return res, nil
}

// run is the state of one Run.
type run struct {
	s       Scenario
	w       Workload
	opts    Options
	cluster *Cluster
	h       *History
	points  *failpoints
}

// execute starts the clients, runs the workload under the scenario's
// faults, lets the clients finish, probes liveness and records the end.
func (r *run) execute(ctx context.Context, newLocker NewLocker) error {
	if err := r.setupInventory(ctx); err != nil {
		return fmt.Errorf("set up inventory: %w", err)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	env := &Env{Cluster: r.cluster, history: r.h}
	// Client r.w.Clients is the liveness probe: a fresh process that only
	// comes to the lock after the workload stopped.
	for id := 0; id <= r.w.Clients; id++ {
		c, links, err := r.cluster.connect(runCtx, clientConfig{id: id, ttl: r.w.TTL, timeout: r.w.Timeout,
			history: r.h, points: r.points})
		if err != nil {
			return err
		}
		defer c.Close()
		env.Clients = append(env.Clients, c)
		env.links = append(env.links, links)
	}
	probe := env.Clients[r.w.Clients]
	env.Clients = env.Clients[:r.w.Clients]
	r.points.start(runCtx, env)

	var stop atomic.Bool
	workers := make([]*worker, r.w.Clients)
	var wg sync.WaitGroup
	for id, c := range env.Clients {
		workers[id] = r.newWorker(c, newLocker, &stop)
		wg.Add(1)
		go func() {
			defer wg.Done()
			workers[id].run(runCtx)
		}()
	}
	faultsDone := r.schedule(runCtx, env)
	logf(r.opts.Log, "%s: %d clients running for %s", r.s.Name, r.w.Clients, r.w.Duration)

	if err := r.wait(ctx); err != nil {
		cancel()
		wg.Wait()
		faultsDone()
		r.points.healAll()
		return err
	}
	stop.Store(true)
	bound := r.w.bound()
	finished := waitFor(&wg, bound)
	var stuck []int
	if !finished {
		for _, wk := range workers {
			if wk.inCycle.Load() {
				stuck = append(stuck, wk.c.id)
			}
		}
	}
	heals := errors.Join(faultsDone(), r.points.healAll())
	if err := ctx.Err(); err != nil {
		return err
	}

	logf(r.opts.Log, "%s: probing liveness (bound %s)", r.s.Name, bound)
	end := &End{Initial: r.w.Stock, Stuck: stuck, Bound: bound, Unfired: r.points.pending()}
	r.probe(runCtx, probe, newLocker, bound, end)
	if err := r.readEnd(ctx, end); err != nil {
		return err
	}
	r.h.Add(Op{Client: -1, Kind: KindEnd, Call: r.h.Now(), Return: r.h.Now(), End: end})

	cancel()
	if !waitFor(&wg, 10*time.Second) {
		return errors.New("clients did not stop within 10 s of the end of the run")
	}
	return heals
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
func (r *run) wait(ctx context.Context) error {
	if !sleepCtx(ctx, r.w.Duration) {
		return ctx.Err()
	}
	select {
	case <-r.points.allFired:
		return nil
	default:
	}
	select {
	case <-r.points.allFired:
		if !sleepCtx(ctx, settle) {
			return ctx.Err()
		}
	case <-time.After(failpointWait):
		logf(r.opts.Log, "%s: failpoints never fired: %v", r.s.Name, r.points.pending())
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (r *run) newWorker(c *Client, newLocker NewLocker, stop *atomic.Bool) *worker {
	return &worker{c: c, lock: newLocker(c), w: r.w, h: r.h, stop: stop,
		rng: rand.New(rand.NewPCG(uint64(r.opts.Seed), uint64(c.id)))}
}

// schedule runs the scenario's timed faults in the background. The returned
// function heals whatever is still injected, waits, and reports heal errors.
func (r *run) schedule(ctx context.Context, env *Env) func() error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make([]error, len(r.s.Faults))
	for i, sf := range r.s.Faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.inject(ctx, env, sf)
		}()
	}
	return func() error {
		cancel()
		wg.Wait()
		return errors.Join(errs...)
	}
}

// inject applies one scheduled fault and heals it when its time is up or the
// run ends, recording it in the history.
func (r *run) inject(ctx context.Context, env *Env, sf ScheduledFault) error {
	if !sleepCtx(ctx, sf.At) {
		return nil
	}
	heal, err := inject(ctx, env, sf.Fault, "")
	if err != nil {
		return err
	}
	sleepCtx(ctx, sf.For)
	return heal()
}

// probe lets a fresh client try to take and give back the lock within bound.
func (r *run) probe(ctx context.Context, c *Client, newLocker NewLocker, bound time.Duration, end *End) {
	var never atomic.Bool
	wk := r.newWorker(c, newLocker, &never)
	wk.probe = true
	pctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	start := time.Now()
	lease, ok := wk.acquire(pctx, false)
	end.ProbeWait = time.Since(start)
	if !ok {
		end.ProbeErr = fmt.Sprintf("no lock within %s", bound)
		return
	}
	end.Probe = true
	wk.release(ctx, lease, false)
}

// readEnd records the stock left and the lock key's expiry.
func (r *run) readEnd(ctx context.Context, end *End) error {
	stock, err := r.stock(ctx)
	if err != nil {
		return fmt.Errorf("read stock: %w", err)
	}
	end.Stock = stock
	master := r.cluster.masters[0]
	if rs := r.cluster.replicated; rs != nil {
		if master, err = rs.Master(ctx); err != nil {
			return err
		}
	}
	pttl, err := master.Admin().PTTL(ctx, r.w.Key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("read lock PTTL: %w", err)
	}
	// go-redis reports -1 (no expiry) and -2 (no key) as those many nanoseconds.
	end.KeyExists = pttl != -2
	end.PTTL = pttl
	return nil
}

// setupInventory puts the starting stock where the workload will sell it.
func (r *run) setupInventory(ctx context.Context) error {
	if db := r.cluster.mariadb; db != nil {
		return db.SetupInventory(ctx, r.w.Stock)
	}
	return r.cluster.inventory.Admin().Set(ctx, stockKey, r.w.Stock, 0).Err()
}

// stock is what is left of the inventory.
func (r *run) stock(ctx context.Context) (int64, error) {
	if db := r.cluster.mariadb; db != nil {
		return db.Stock(ctx)
	}
	return r.cluster.inventory.Admin().Get(ctx, stockKey).Int64()
}

func (r *run) faultLabels() []string {
	var labels []string
	for _, f := range r.s.Failpoints {
		labels = append(labels, "failpoint: "+f.String())
	}
	for _, f := range r.s.Faults {
		labels = append(labels, fmt.Sprintf("at %s for %s: %s", f.At, f.For, f.Fault))
	}
	return labels
}

// waitFor waits for wg at most d and reports whether it finished.
func waitFor(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
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
