package harness

import (
	"fmt"
	"sync"
	"time"
)

// Failpoint names used by the workload itself. Lock code names its own
// (after-setnx, before-del, …) by calling Client.Failpoint.
const (
	// FailpointCriticalSection is inside the critical section, after the stock was read.
	FailpointCriticalSection = "critical-section"
)

// ActionKind is what an armed failpoint does.
type ActionKind string

const (
	ActionCrash ActionKind = "crash" // the client crashes there
	ActionPause ActionKind = "pause" // stop-the-world pause of the whole client
	ActionSleep ActionKind = "sleep" // only the calling goroutine waits: slow work
)

// Action is what a failpoint does when it fires.
type Action struct {
	Kind ActionKind
	For  time.Duration // for pause and sleep
}

// Crash makes the failpoint crash the client.
func Crash() Action { return Action{Kind: ActionCrash} }

// Pause makes the failpoint stop the whole client for d.
func Pause(d time.Duration) Action { return Action{Kind: ActionPause, For: d} }

// Sleep makes the failpoint delay only its caller for d.
func Sleep(d time.Duration) Action { return Action{Kind: ActionSleep, For: d} }

func (a Action) String() string {
	if a.Kind == ActionCrash {
		return string(a.Kind)
	}
	return fmt.Sprintf("%s(%s)", a.Kind, a.For)
}

// AnyClient arms a failpoint for every client.
const AnyClient = -1

// Failpoint arms one named point with an action.
type Failpoint struct {
	Name   string
	Client int    // which client it fires for; AnyClient for all
	Skip   int    // hits to let pass before it fires
	Times  int    // how many hits fire after that; 0 means 1
	Action Action // what it does
}

func (f Failpoint) String() string {
	who := fmt.Sprintf("client %d", f.Client)
	if f.Client == AnyClient {
		who = "any client"
	}
	times := f.Times
	if times == 0 {
		times = 1
	}
	return fmt.Sprintf("%s at %s for %s, %d time(s) after %d hit(s)", f.Action, f.Name, who, times, f.Skip)
}

// failpoints is the armed set of one run, counting hits per failpoint.
type failpoints struct {
	mu    sync.Mutex
	armed []Failpoint
	hits  []int
}

func newFailpoints(armed []Failpoint) *failpoints {
	return &failpoints{armed: armed, hits: make([]int, len(armed))}
}

// hit counts a hit of name by client and returns the action to take, if any.
func (f *failpoints) hit(name string, client int) (Action, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, fp := range f.armed {
		if fp.Name != name || (fp.Client != AnyClient && fp.Client != client) {
			continue
		}
		f.hits[i]++
		times := fp.Times
		if times == 0 {
			times = 1
		}
		if n := f.hits[i]; n > fp.Skip && n <= fp.Skip+times {
			return fp.Action, true
		}
	}
	return Action{}, false
}
