package failpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/history"
)

// Set is the armed failpoints of one run, counting hits per failpoint. It
// also injects the faults failpoints carry, so it knows the run's Env.
type Set struct {
	mu       sync.Mutex
	armed    []Point
	hits     []int
	toFire   int                    // required failpoints that have not fired yet
	allFired chan struct{}          // closed when toFire reaches 0
	acting   int                    // failpoint actions under way
	reached  map[string]map[int]int // hits per failpoint name and client, armed or not
	spoiled  string                 // why the run did not happen as written (Spoil)
	gaveUp   map[int]bool           // failpoints at commands no program can reach: not awaited
	unreach  string                 // why they cannot (GiveUpCommands)
	changed  chan struct{}          // closed and replaced at every hit
	inflight Inflight               // the clients' commands naming the lock key, on their way

	holds map[string]map[int][]func() // per failpoint and client, what ends a HoldConn there (AddHold)

	env    *fault.Env
	ctx    context.Context // ends when the run heals every fault
	cancel context.CancelFunc
	heals  sync.WaitGroup
	errs   []error
}

// NewSet arms the points armed for one run.
func NewSet(armed []Point) *Set {
	f := &Set{armed: armed, hits: make([]int, len(armed)), allFired: make(chan struct{}),
		reached: map[string]map[int]int{}, changed: make(chan struct{})}
	for _, fp := range armed {
		if !fp.Optional {
			f.toFire++
		}
	}
	if f.toFire == 0 {
		close(f.allFired)
	}
	return f
}

// Fired says, for each armed failpoint in the order it was armed, whether
// it fired: it was reached more than its Skip times.
func (f *Set) Fired() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	fired := make([]bool, len(f.armed))
	for i, fp := range f.armed {
		fired[i] = f.hits[i] > fp.Skip
	}
	return fired
}

// AllFired is closed once every required failpoint has fired.
func (f *Set) AllFired() <-chan struct{} { return f.allFired }

// Unfired says, one line each, which required failpoints have not fired.
func (f *Set) Unfired() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lines []string
	for i, fp := range f.armed {
		if fp.Optional || f.hits[i] > fp.Skip {
			continue
		}
		line := fmt.Sprintf("failpoint %s never fired (%s): ", fp.Name, fp)
		switch {
		case f.gaveUp[i]:
			line += f.unreach
		case len(f.reached[fp.Name]) == 0 && IsCommandPoint(fp.Name):
			line += "no client ever got there: the lock never sent such a command"
		case len(f.reached[fp.Name]) == 0:
			line += fmt.Sprintf("no client ever reached it; a lock that has no such hook never calls Client.Failpoint(ctx, %q)", fp.Name)
		default:
			line += fmt.Sprintf("it was reached %d time(s), not enough for it to fire", f.hits[i])
		}
		lines = append(lines, line)
	}
	return lines
}

// Missed says, one line each, why a crux failpoint never fired; explain
// says, from the run's history, what kept the client it is armed for from
// getting there.
func (f *Set) Missed(explain func(client int) string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lines []string
	for i, fp := range f.armed {
		if !fp.Crux || f.hits[i] > fp.Skip {
			continue
		}
		what := fp.Action.String()
		if fp.Action.Kind == ActionFault {
			what = fp.Action.Fault.String()
		}
		line := fmt.Sprintf("its fault never came (%s, at %s, hit %d of %s): ", what, fp.Name, fp.Skip+1, who(fp.Client))
		switch {
		case len(f.reached[fp.Name]) == 0 && IsCommandPoint(fp.Name):
			line += "the lock never sent such a command"
		case fp.Client == AnyClient:
			line += fmt.Sprintf("it was reached %d time(s), not enough for it to fire", f.hits[i])
		default:
			line += explain(fp.Client)
		}
		lines = append(lines, line)
	}
	return lines
}

// who names the client a failpoint is armed for.
func who(client int) string {
	if client == AnyClient {
		return "any client"
	}
	return fmt.Sprintf("client %d", client)
}

// Done marks the end of the actions a hit returned.
func (f *Set) Done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acting--
	f.notify()
}

// notify wakes every waiter on changed; the caller holds mu.
func (f *Set) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// AwaitIdle waits until no failpoint action is under way, or ctx ends.
func (f *Set) AwaitIdle(ctx context.Context) {
	for {
		f.mu.Lock()
		acting, changed := f.acting, f.changed
		f.mu.Unlock()
		if acting == 0 {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// Hit counts a hit of name by client and returns the actions to take, in
// the order they were armed. When it returns any, they count as under way
// until the caller calls Done.
func (f *Set) Hit(name string, client int) []Action {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reached[name] == nil {
		f.reached[name] = map[int]int{}
	}
	f.reached[name][client]++
	f.notify()
	var actions []Action
	for i, fp := range f.armed {
		if fp.Name != name || (fp.Client != AnyClient && fp.Client != client) {
			continue
		}
		f.hits[i]++
		times := fp.Times
		if times == 0 {
			times = 1
		}
		n := f.hits[i]
		if n > fp.Skip && n <= fp.Skip+times {
			a := fp.Action
			a.Crux = fp.Crux
			actions = append(actions, a)
		}
		if n == fp.Skip+1 && !fp.Optional && !f.gaveUp[i] {
			if f.toFire--; f.toFire == 0 {
				close(f.allFired)
			}
		}
	}
	if len(actions) > 0 {
		f.acting++
	}
	return actions
}

// others counts the hits of name by clients other than client.
func (f *Set) others(name string, client int) int {
	n := 0
	for c, hits := range f.reached[name] {
		if c != client {
			n += hits
		}
	}
	return n
}

// AwaitOther waits until a client other than client reaches failpoint name,
// and reports whether one did before ctx ended.
func (f *Set) AwaitOther(ctx context.Context, name string, client int) bool {
	f.mu.Lock()
	before := f.others(name, client)
	for {
		if f.others(name, client) > before {
			f.mu.Unlock()
			return true
		}
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
		f.mu.Lock()
	}
}

// Start gives the failpoints what their faults act on.
func (f *Set) Start(ctx context.Context, env *fault.Env) {
	f.env = env
	f.ctx, f.cancel = context.WithCancel(ctx)
}

// Inject applies a failpoint's fault, struck at at, and heals it after
// a.For, recording it. The fault belongs to the run, not to the command
// that reached the failpoint: a lock's short per-node timeout must not cut
// its injection short, so it is bound to the run's context only.
func (f *Set) Inject(a Action, at At) {
	if f.env == nil {
		return // a client outside any run: nothing to inject into
	}
	where := fmt.Sprintf("at failpoint %s of client %d", at.Words, at.Client)
	heal, err := fault.Apply(f.ctx, f.env, a.Fault, at.Record(history.Op{Detail: where, Crux: a.Crux}))
	if err != nil {
		f.fail(fmt.Errorf("%s: %w", where, err))
		return
	}
	done := func() {
		if err := heal(); err != nil {
			f.fail(err)
		}
	}
	if a.For == 0 {
		done()
		return
	}
	f.heals.Add(1)
	go func() {
		defer f.heals.Done()
		t := time.NewTimer(a.For)
		defer t.Stop()
		select {
		case <-t.C:
		case <-f.ctx.Done():
		}
		done()
	}()
}

func (f *Set) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err)
}

// HealAll heals every fault still injected and reports what went wrong.
func (f *Set) HealAll() error {
	if f.cancel == nil {
		return nil
	}
	f.cancel()
	f.heals.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

// Spoil keeps the first reason a run was spoiled.
func (f *Set) Spoil(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.spoiled == "" {
		f.spoiled = why
	}
}

// SpoiledBy lists the reason the run was spoiled, if it was.
func (f *Set) SpoiledBy() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.spoiled == "" {
		return nil
	}
	return []string{f.spoiled}
}

// GiveUpCommands gives up on the failpoints at the lock's own commands,
// which the requests of a program without a relay never reach (why says
// why), so that the run does not wait for them; Unfired still names the
// required ones, and MissedDrawn the drawn ones.
func (f *Set) GiveUpCommands(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gaveUp != nil {
		return
	}
	f.gaveUp, f.unreach = map[int]bool{}, why
	for i, fp := range f.armed {
		// The critical section's commands are the workload's, sent by locklab.
		if !IsCommandPoint(fp.Name) || strings.Contains(fp.Name, string(PhaseSection)) || f.hits[i] > fp.Skip {
			continue
		}
		f.gaveUp[i] = true
		if fp.Optional {
			continue
		}
		if f.toFire--; f.toFire == 0 {
			close(f.allFired)
		}
	}
}

// MissedDrawn says, one line each, why a drawn (optional) failpoint at the lock's
// own commands never struck: the lock is a program whose requests no relay
// reads (GiveUpCommands). Its run's verdicts stand, but they say nothing
// about that fault.
func (f *Set) MissedDrawn() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lines []string
	for i, fp := range f.armed {
		if !fp.Optional || !f.gaveUp[i] || f.hits[i] > fp.Skip {
			continue
		}
		what := fp.Action.String()
		if fp.Action.Kind == ActionFault {
			what = fp.Action.Fault.String()
		}
		line := fmt.Sprintf("a drawn fault never came (%s, at %s, %s): %s", what, fp.Name, who(fp.Client), f.unreach)
		if !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	return lines
}

// AddHold registers end, which ends a HoldConn of client when it next
// reaches failpoint name.
func (f *Set) AddHold(name string, client int, end func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.holds == nil {
		f.holds = map[string]map[int][]func(){}
	}
	if f.holds[name] == nil {
		f.holds[name] = map[int][]func(){}
	}
	f.holds[name][client] = append(f.holds[name][client], end)
}

// EndHolds ends the HoldConns of client waiting for failpoint name, and
// returns once their connections are back in the pool.
func (f *Set) EndHolds(name string, client int) {
	f.mu.Lock()
	ends := f.holds[name][client]
	delete(f.holds[name], client)
	f.mu.Unlock()
	for _, end := range ends {
		end()
	}
}

// Inflight is the run's count of the clients' commands naming the lock
// key on their way, which tells the command that took the key (AfterTook).
func (f *Set) Inflight() *Inflight { return &f.inflight }

// Inflight counts, per node, the commands naming the lock key that the
// clients of a run have on their way. A change of the key's state while a
// command was alone on its way to that node is that command's doing.
type Inflight struct {
	mu     sync.Mutex
	active map[int]int
	gen    map[int]uint64 // moves at every start and end
}

// Start counts a command on its way to node; alone says no other was.
func (k *Inflight) Start(node int) (gen uint64, alone bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.active == nil {
		k.active, k.gen = map[int]int{}, map[int]uint64{}
	}
	k.active[node]++
	k.gen[node]++
	return k.gen[node], k.active[node] == 1
}

// End counts the command started at gen off; alone says no other started
// or ended meanwhile.
func (k *Inflight) End(node int, gen uint64) (alone bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	alone = k.gen[node] == gen
	k.active[node]--
	k.gen[node]++
	return alone
}

// Reached counts the hits of failpoint name by client, armed or not.
func (f *Set) Reached(name string, client int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reached[name][client]
}
