// Package failpoint arms a run's failpoints: named points of a lock's life
// (its k-th command of a phase, the critical section, the moment it took
// the key) where the scenario crashes, pauses or slows a client, drops a
// reply or injects a fault. A Set counts the hits of one run and says which
// armed points never fired, and why.
package failpoint

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/history"
)

// Names of the failpoints the workload itself reaches. The lock's own commands are
// failpoints too (BeforeCommand, AfterCommand, AfterTook), with no hook in
// the lock; a lock may still name its own by calling harness.Client.Failpoint.
const (
	// BeforeAcquire is at the start of each cycle, before the lock is asked for.
	BeforeAcquire = "before-acquire"
	// Acquired is right after an acquire succeeded, before the critical section.
	Acquired = "acquired"
	// BeforeCommit is in a transactional critical section, after
	// the UPDATE and before COMMIT.
	BeforeCommit = "before-commit"
	// CriticalSection is inside the critical section, after the stock was read.
	CriticalSection = "critical-section"
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
	// Crux is set on the actions a Set hands out when their point is the
	// scenario's crux, so that the history says so.
	Crux bool
}

// Crash makes the failpoint crash the client.
func Crash() Action { return Action{Kind: ActionCrash} }

// Pause makes the failpoint stop the whole client for d.
func Pause(d time.Duration) Action { return Action{Kind: ActionPause, For: d} }

// PauseUntil makes the failpoint stop the whole client until another client
// reaches failpoint name, at most max: exactly as long as the pitfall needs,
// however loaded the machine is. PauseUntil(Acquired, d) lasts until
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

// Point arms one named failpoint with an action. Several points armed at
// one name fire in the order they are armed.
type Point struct {
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
	// lock to that fault: its verdicts stand, and Result.Missed says why the
	// fault never came, so that a pass is not read as a pass of that fault.
	Crux bool
}

func (f Point) String() string {
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
func (fp Point) About() fault.About {
	if fp.Action.Kind == ActionFault {
		return fp.Action.Fault.About()
	}
	a, ok := actionOf(fp.Action.Kind)
	if !ok {
		return fault.About{Client: fp.Client}
	}
	return fault.About{Kind: fault.Named(a.kind(fp.Name)), Client: fp.Client, Struck: history.Target{Type: a.struck}}
}

// action is what an action of one kind is as a fault: the one place that
// says so, for About and the harness's records.
type action struct {
	action ActionKind
	// fault is the name of its kind of fault (fault.Kinds); atCommand,
	// when not empty, the kind it is at a command's failpoint instead.
	fault, atCommand string
	// struck is what it strikes: the client itself, in the harness, or,
	// for a reply it drops, the client's link to a node.
	struck history.TargetType
}

// kind is the name of the kind of fault a's action is at failpoint name.
func (a action) kind(name string) string {
	if a.atCommand != "" && IsCommandPoint(name) {
		return a.atCommand
	}
	return a.fault
}

// actions are every action kind but ActionFault, whose kind is its
// fault's, with the kind of fault each is. A new action kind is a line
// here; TestActionsAreKinds checks each names a kind of fault.Kinds.
func actions() []action {
	return []action{
		{action: ActionPause, fault: "pause", struck: history.TargetClient},
		{action: ActionCrash, fault: "crash", struck: history.TargetClient},
		{action: ActionDrop, fault: "drop-reply", struck: history.TargetLink},
		{action: ActionHold, fault: "busy-pool", struck: history.TargetClient},
		// Only the calling goroutine waits: in the lock's own code, slow
		// work; at one of its commands, a delayed command.
		{action: ActionSleep, fault: "slow-work", atCommand: "command-delay", struck: history.TargetClient},
	}
}

// actionOf is the row of actions for action kind k.
func actionOf(k ActionKind) (action, bool) {
	list := actions()
	if i := slices.IndexFunc(list, func(a action) bool { return a.action == k }); i >= 0 {
		return list[i], true
	}
	return action{}, false
}

// ActionKindName is the name of the kind of fault (fault.Kinds) an action
// of kind k at failpoint name is, or "" for one that is none (a fault's,
// which is its fault's kind).
func ActionKindName(k ActionKind, name string) string {
	if a, ok := actionOf(k); ok {
		return a.kind(name)
	}
	return ""
}

// At is where a failpoint fired, as the history records it and people
// read it.
type At struct {
	Name    string // the failpoint's name: CriticalSection, BeforeCommand(PhaseRelease, 1)
	Client  int    // the client that reached it
	Phase   Phase  // the phase of the lock's life the client was in; empty when in none
	Command string // at a command's failpoint, the command's first words ("DEL")
	// Words are how it reads for people: the name, or for a command's
	// failpoint "before DEL (release command 1)".
	Words string
}

// Record is op with where it struck: its failpoint, phase and command.
func (at At) Record(op history.Op) history.Op {
	op.Failpoint, op.Phase, op.Command = at.Name, string(at.Phase), at.Command
	return op
}

// ActionHold is another part of the client's process using its SQL pool:
// it takes one pooled connection and keeps it busy for a while.
const ActionHold ActionKind = "hold-conn"

// HoldConn makes the failpoint take one connection of the client's SQL
// pool, as another goroutine of the same process running a query would,
// and keep it until this same client reaches failpoint until (at most
// max). database/sql hands out the connection returned last, so the hold
// takes the one the client used last, and what the client sends meanwhile
// goes over another; when the hold ends, at the very moment the client
// reaches until, its connection is again the one returned last. A lock
// that keeps state in a connection's session (PostgreSQL's advisory
// locks) thus takes it on one connection and, after until, sends its
// next request on the other: on every run, not by the pool's chance.
func HoldConn(until string, max time.Duration) Action {
	return Action{Kind: ActionHold, For: max, Until: until}
}

// Phase is the part of a lock's life a command (Redis) or statement (SQL)
// belongs to. The workload knows it, so faults can strike a lock's own
// commands without any hook in the lock.
type Phase string

const (
	PhaseAcquire    Phase = "acquire"    // inside Locker.Acquire
	PhaseSection    Phase = "section"    // inside the critical section (its reads and writes of the stock)
	PhaseRelease    Phase = "release"    // inside Lease.Release
	PhaseBackground Phase = "background" // in a goroutine started with Client.Go, such as a watchdog
)

// BeforeCommand names the failpoint just before the k-th command (from 1)
// of each phase: each Acquire, each Release, each critical section and each
// background goroutine counts its own commands.
func BeforeCommand(p Phase, k int) string { return fmt.Sprintf("before %s command %d", p, k) }

// AfterCommand names the failpoint just after the k-th command of each
// phase ran on the server, before the client sees its reply.
func AfterCommand(p Phase, k int) string { return fmt.Sprintf("after %s command %d", p, k) }

// AfterTook is the failpoint just after the first command of an Acquire
// that took the key: made the workload's key exist, or made it this
// client's (took.go says how that is told, from the command and the key's
// state, not from the reply's shape alone), before the lock sees its reply.
// It is where a crash leaves whatever that command wrote, and nothing more.
const AfterTook = "after the acquire command that took the key"

// IsCommandPoint reports whether name is one of the failpoints above, which
// the lock reaches by sending commands rather than by calling Failpoint.
func IsCommandPoint(name string) bool {
	return name == AfterTook || strings.HasPrefix(name, "before ") || strings.HasPrefix(name, "after ")
}
