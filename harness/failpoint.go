package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/fault"
)

// Failpoint names used by the workload itself. The lock's own commands are
// failpoints too (BeforeCommand, AfterCommand, AfterTook), with no hook in
// the lock; a lock may still name its own by calling Client.Failpoint.
const (
	// FailpointBeforeAcquire is at the start of each cycle, before the lock is asked for.
	FailpointBeforeAcquire = "before-acquire"
	// FailpointAcquired is right after an acquire succeeded, before the critical section.
	FailpointAcquired = "acquired"
	// FailpointBeforeCommit is in a transactional critical section, after
	// the UPDATE and before COMMIT.
	FailpointBeforeCommit = "before-commit"
	// FailpointCriticalSection is inside the critical section, after the stock was read.
	FailpointCriticalSection = "critical-section"
)

// ActionKind is what an armed failpoint does.
type ActionKind string

const (
	ActionCrash ActionKind = "crash" // the client crashes there
	ActionPause ActionKind = "pause" // stop-the-world pause of the whole client
	ActionSleep ActionKind = "sleep" // only the calling goroutine waits: slow work
	ActionFault ActionKind = "fault" // inject a fault at this exact moment of the lock's life
	ActionDrop  ActionKind = "drop"  // a command's reply is lost: it ran on the server, the client sees a timeout
)

// Action is what a failpoint does when it fires.
type Action struct {
	Kind  ActionKind
	For   time.Duration // pause and sleep length; for a fault, when it heals
	Fault fault.Fault   // for ActionFault
	// Until ends a pause or sleep as soon as another client reaches this
	// failpoint (For is then the longest it may last).
	Until string
	crux  bool // its failpoint is the scenario's crux: the history says so
}

// Crash makes the failpoint crash the client.
func Crash() Action { return Action{Kind: ActionCrash} }

// Pause makes the failpoint stop the whole client for d.
func Pause(d time.Duration) Action { return Action{Kind: ActionPause, For: d} }

// PauseUntil makes the failpoint stop the whole client until another client
// reaches failpoint name, at most max: exactly as long as the pitfall needs,
// however loaded the machine is. PauseUntil(FailpointAcquired, d) lasts until
// the lock has changed hands.
func PauseUntil(name string, max time.Duration) Action {
	return Action{Kind: ActionPause, For: max, Until: name}
}

// Sleep makes the failpoint delay only its caller for d.
func Sleep(d time.Duration) Action { return Action{Kind: ActionSleep, For: d} }

// SleepUntil makes the failpoint delay only its caller until another client
// reaches failpoint name, at most max: slow work that lasts exactly until the
// overlap a pitfall needs.
func SleepUntil(name string, max time.Duration) Action {
	return Action{Kind: ActionSleep, For: max, Until: name}
}

// DropReply makes a command failpoint (BeforeCommand, AfterCommand,
// AfterTook) lose that command's reply: the command runs on Redis and the
// client waits its read timeout, then sees a timeout error.
func DropReply() Action { return Action{Kind: ActionDrop} }

// Inject makes the failpoint inject f and heal it after d, in the background;
// with d = 0 it heals at once, before the failpoint returns.
func Inject(f fault.Fault, d time.Duration) Action {
	return Action{Kind: ActionFault, Fault: f, For: d}
}

func (a Action) String() string {
	switch a.Kind {
	case ActionCrash, ActionDrop:
		return string(a.Kind)
	case ActionHold:
		return fmt.Sprintf("hold one of the client's SQL connections until it reaches %s (at most %s)", a.Until, a.For)
	case ActionFault:
		if a.For >= WholeRun {
			return fmt.Sprintf("%s, healed when the run ends", a.Fault)
		}
		return fmt.Sprintf("%s, healed after %s", a.Fault, a.For)
	}
	if a.Until != "" {
		return fmt.Sprintf("%s until another client reaches %s (at most %s)", a.Kind, a.Until, a.For)
	}
	return fmt.Sprintf("%s(%s)", a.Kind, a.For)
}

// AnyClient arms a failpoint for every client.
const AnyClient = -1

// Failpoint arms one named point with an action. Several failpoints armed at
// one name fire in the order they are armed.
type Failpoint struct {
	Name   string
	Client int    // which client it fires for; AnyClient for all
	Skip   int    // hits to let pass before it fires
	Times  int    // how many hits fire after that; 0 means 1
	Action Action // what it does
	// Optional marks a failpoint a correct lock may keep the workload from
	// ever reaching. A run lasts until every other failpoint has fired.
	Optional bool
	// Crux marks the fault the scenario is about (the master's kill in a
	// failover). A run in which an optional crux never fired did not put the
	// lock to that fault: its verdicts stand, and Result.Unmet says why the
	// fault never came, so that a pass is not read as a pass of that fault.
	Crux bool
}

func (f Failpoint) String() string {
	times := f.Times
	if times == 0 {
		times = 1
	}
	return fmt.Sprintf("%s at %s for %s, %d time(s) after %d hit(s)", f.Action, f.Name, who(f.Client), times, f.Skip)
}

// WholeRun is how long a fault lasts that is healed only when the run ends;
// no run is that long.
const WholeRun = time.Hour

// About is what the failpoint's action does, as a fault of its kind.
func (fp Failpoint) About() fault.About {
	kind := ""
	switch fp.Action.Kind {
	case ActionFault:
		return fp.Action.Fault.About()
	case ActionPause:
		kind = "pause"
	case ActionCrash:
		kind = "crash"
	case ActionDrop:
		kind = "drop-reply"
	case ActionHold:
		kind = "busy-pool"
	case ActionSleep:
		kind = "slow-work"
		if isCommandPoint(fp.Name) {
			kind = "command-delay"
		}
	default:
		return fault.About{Client: fp.Client}
	}
	return fault.About{Kind: fault.Named(kind), Client: fp.Client}
}

// Failpoints is the armed set of one run, counting hits per failpoint. It
// also injects the faults failpoints carry, so it knows the run's Env.
type Failpoints struct {
	mu        sync.Mutex
	armed     []Failpoint
	hits      []int
	toFire    int                    // required failpoints that have not fired yet
	allFired  chan struct{}          // closed when toFire reaches 0
	acting    int                    // failpoint actions under way
	reached   map[string]map[int]int // hits per failpoint name and client, armed or not
	spoiled   string                 // why the run did not happen as written (Client.Spoil)
	gaveUp    map[int]bool           // failpoints at commands no program can reach: not awaited
	unrelayed string                 // why they cannot (Endpoints.Unrelayed)
	changed   chan struct{}          // closed and replaced at every hit
	keyCmds   keyCommands            // the clients' commands naming the lock key, on their way

	holds map[string]map[int][]func() // per failpoint and client, what ends a HoldConn there (hold.go)

	env    *fault.Env
	ctx    context.Context // ends when the run heals every fault
	cancel context.CancelFunc
	heals  sync.WaitGroup
	errs   []error
}

func NewFailpoints(armed []Failpoint) *Failpoints {
	f := &Failpoints{armed: armed, hits: make([]int, len(armed)), allFired: make(chan struct{}),
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

// AllFired is closed once every required failpoint has fired.
func (f *Failpoints) AllFired() <-chan struct{} { return f.allFired }

// Unfired says, one line each, which required failpoints have not fired.
func (f *Failpoints) Unfired() []string {
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
			line += f.unrelayed
		case len(f.reached[fp.Name]) == 0 && isCommandPoint(fp.Name):
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

// Unmet says, one line each, why a crux failpoint never fired; explain
// says, from the run's history, what kept the client it is armed for from
// getting there.
func (f *Failpoints) Unmet(explain func(client int) string) []string {
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
		case len(f.reached[fp.Name]) == 0 && isCommandPoint(fp.Name):
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

// done marks the end of the actions a hit returned.
func (f *Failpoints) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acting--
	f.notify()
}

// notify wakes every waiter on changed; the caller holds mu.
func (f *Failpoints) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// AwaitIdle waits until no failpoint action is under way, or ctx ends.
func (f *Failpoints) AwaitIdle(ctx context.Context) {
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

// hit counts a hit of name by client and returns the actions to take, in
// the order they were armed. When it returns any, they count as under way
// until the caller calls done.
func (f *Failpoints) hit(name string, client int) []Action {
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
			a.crux = fp.Crux
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
func (f *Failpoints) others(name string, client int) int {
	n := 0
	for c, hits := range f.reached[name] {
		if c != client {
			n += hits
		}
	}
	return n
}

// awaitOther waits until a client other than client reaches failpoint name,
// and reports whether one did before ctx ended.
func (f *Failpoints) awaitOther(ctx context.Context, name string, client int) bool {
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
func (f *Failpoints) Start(ctx context.Context, env *fault.Env) {
	f.env = env
	f.ctx, f.cancel = context.WithCancel(ctx)
}

// inject applies a failpoint's fault and heals it after a.For, recording it.
// The fault belongs to the run, not to the command that reached the
// failpoint: a lock's short per-node timeout must not cut its injection
// short, so it is bound to the run's context only.
func (f *Failpoints) inject(a Action, where string) {
	if f.env == nil {
		return // a client outside any run: nothing to inject into
	}
	heal, err := fault.Apply(f.ctx, f.env, a.Fault, where, a.crux)
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

func (f *Failpoints) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err)
}

// HealAll heals every fault still injected and reports what went wrong.
func (f *Failpoints) HealAll() error {
	if f.cancel == nil {
		return nil
	}
	f.cancel()
	f.heals.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}
