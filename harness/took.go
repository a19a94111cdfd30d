package harness

import (
	"context"
	"slices"
	"time"

	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/harness/rediscmd"
)

// How an Acquire's command is told to have taken the lock key (failpoint.AfterTook).
//
// A command whose meaning is known says it by itself: SET (with NX, XX,
// GET in any mix: SET NX GET replies nil when it took the key), SETNX,
// GETSET and the like write the key or not by their reply; reads, expiry
// changes and deletes never take it. Any other command naming the key (a
// script, a function, HSET, HINCRBY …) is opaque: the key's state, read
// with DUMP on the same node just before and just after it, on a
// connection of locklab's own (no hook, not counted, never struck), says
// whether it made the key exist or changed what it holds. The state speaks
// only for a command that was alone on the way to its node among the
// commands of the run's clients that name the key; otherwise another
// client may have made the change. When the state cannot speak (another
// command was on its way, or the node did not answer in time), the opaque
// command is not taken to have taken the key: failpoint.AfterTook then strikes a
// later take that can be told, rather than a client that may hold nothing.

// sentCommand is one command of the lock as strike sees it: its words
// (the name first) and, once it ran, its reply in the terms of rediscmd.TookBy (a
// string, an int64, a bool, or nil for a null or a reply of another
// shape) and its error.
type sentCommand struct {
	args  []string
	reply func() (any, error)
}

// probeTimeout bounds a read of the key's state: it is on a direct local
// connection, and the lock's command waits for it.
const probeTimeout = 100 * time.Millisecond

// keyWatch follows one command (or pipeline) of the lock on node that
// names the lock key. Every such command, in every phase, is counted on
// its way (keyCommands); an Acquire's opaque one has the key's state read
// around it.
type keyWatch struct {
	c      *Client
	node   int
	cmds   []sentCommand
	key    string // the lock key as the commands name it (lockKeyIn)
	watch  bool   // an Acquire's command before the one that took the key
	gen    uint64 // keyCommands' count for node when it started
	alone  bool   // no other command naming the key was on its way then
	probed bool   // before was read
	before keyState
}

// keyState is what the lock key holds on a node: DUMP's serialization, or
// nothing.
type keyState struct {
	exists bool
	dump   string
}

// watchKey starts following cmds, just before they are sent.
func (c *Client) watchKey(ctx context.Context, pr *phaseRun, node int, cmds []sentCommand) *keyWatch {
	key := ""
	for _, s := range cmds {
		if k, ok := c.lockKeyIn(s.args); ok {
			key = k
			break
		}
	}
	if node < 0 || key == "" {
		return nil
	}
	w := &keyWatch{c: c, node: node, cmds: cmds, key: key, watch: pr.phase == failpoint.PhaseAcquire && pr.tookSent.Load() == 0}
	w.gen, w.alone = c.points.Inflight().Start(node)
	if w.watch && slices.ContainsFunc(cmds, func(s sentCommand) bool { _, known := rediscmd.TookBy(s.args, nil, nil, key); return !known }) {
		w.before, w.probed = c.keyState(ctx, node, key)
	}
	return w
}

// took ends following the commands, once they ran, and reports whether
// they took the key.
func (w *keyWatch) took(ctx context.Context) bool {
	if w == nil {
		return false
	}
	var after keyState
	stateSays := false
	if w.probed {
		after, stateSays = w.c.keyState(ctx, w.node, w.key)
	}
	alone := w.c.points.Inflight().End(w.node, w.gen) && w.alone
	if !w.watch {
		return false
	}
	for _, s := range w.cmds {
		reply, err := s.reply()
		if took, known := rediscmd.TookBy(s.args, reply, err, w.key); known {
			if took {
				return true
			}
			continue
		}
		if stateSays && alone && after.exists && after != w.before {
			return true
		}
	}
	return false
}

// keyState reads key on node on the client's probe (KeyReader,
// DUMP on Redis); ok is false when the read failed (the node is down,
// paused or cut off) or the client has no probe.
func (c *Client) keyState(ctx context.Context, node int, key string) (keyState, bool) {
	if c.probe == nil {
		return keyState{}, false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	defer cancel()
	dump, exists, err := c.probe.ReadKey(ctx, node, key)
	if err != nil {
		return keyState{}, false
	}
	return keyState{exists: exists, dump: dump}, true
}

// lockKeyIn is the key of a command with words args that is the lock's:
// the key its requests showed (serverKey) or the workload's key itself,
// or, for a command whose meaning is known (rediscmd.TookBy: SET NX,
// SETNX, a read, a DEL …), a key that holds it as a library names its
// keys ("app:orders:lock", footprint.Matches), so that a lock program that
// prefixes its key is struck where its SET NX took it before any acquire
// showed the key. An opaque command (a script, INCR) counts only with the
// key itself: a Go lock's fencing counter ("lock:fence") holds the key
// too, and its INCR takes nothing.
func (c *Client) lockKeyIn(args []string) (string, bool) {
	if k, ok := rediscmd.KeyIn(args, func(k string) bool { return k == c.serverKey() || k == c.key }); ok {
		return k, true
	}
	return rediscmd.KeyIn(args, func(k string) bool {
		_, known := rediscmd.TookBy(args, nil, nil, k)
		return known && footprint.Matches(k, c.key)
	})
}

// serverKey is the lock's key as its commands name it on the servers: the
// one its requests showed (ClientOptions.KeyOf), or the workload's.
func (c *Client) serverKey() string {
	if c.keyOf != nil {
		if k := c.keyOf(); k != "" {
			return k
		}
	}
	return c.key
}
