package harness

import (
	"errors"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// exchange is one command (or pipeline) as its node saw it: whether it was
// sent at all, when it left, and when the reply came back, without the
// failpoints and client pauses around it.
type exchange struct {
	h         *history.Recorder
	sent      bool
	call, ret time.Duration
}

// wrap is send, timed: only a command that reaches wrap's send left the
// client.
func (x *exchange) wrap(send func() error) func() error {
	return func() error {
		x.sent, x.call = true, x.h.Now()
		err := send()
		x.ret = x.h.Now()
		return err
	}
}

// replyNode is the lock node whose replies to a command sent to node the
// history records, and false when it records none: the run has one lock
// node (its client lanes say it all), or node is not a lock node (the
// inventory). On replicated the lock node is the data node that the
// client's Sentinel failover client last dialled, which Sentinel named
// master then.
func (c *Client) replyNode(node int) (int, bool) {
	switch {
	case node < 0:
		return 0, false
	case c.dialled != nil:
		n := int(c.dialled.Load())
		return n, n >= 0
	case len(c.nodes) > 1:
		return node, true
	}
	return 0, false
}

// recordReplies records one reply op per command of cmds that names the
// lock key: which node said yes or no to what, and when. A command that
// was never sent (the client crashed, or the run ended, first) has none.
func (c *Client) recordReplies(pr *phaseRun, node int, cmds []sentCommand, x *exchange) {
	n, ok := c.replyNode(node)
	if !ok || !x.sent {
		return
	}
	for _, s := range cmds {
		if !namesKey(s.args, c.key) {
			continue
		}
		op := history.Op{Client: c.id, Kind: history.KindReply, Key: c.key, Call: x.call, Return: x.ret,
			Node: n, Command: commandWords(s.args), Phase: string(pr.phase)}
		reply, err := s.reply()
		var redisErr interface{ RedisError() }
		switch {
		case err == nil:
			op.Outcome = replyOutcome(reply)
		case errors.As(err, &redisErr):
			op.Error = err.Error()
		default:
			// A timeout, a broken connection: no reply came.
			op.Return, op.Error = history.NeverReturned, err.Error()
		}
		c.history.Add(op)
	}
}

// replyOutcome reads a reply as yes or no: OK, true, a positive number or
// a non-empty string say the command did what it asked (SET took the key,
// a script returned 1, PEXPIRE renewed, DEL removed, GET found a value); a
// null, false, zero, a negative number (PTTL of no key) or "" say no.
func replyOutcome(reply any) models.Outcome {
	switch v := reply.(type) {
	case string:
		if v != "" {
			return models.OK
		}
	case bool:
		if v {
			return models.OK
		}
	case int64:
		if v > 0 {
			return models.OK
		}
	}
	return models.Failed
}

// commandWords names a command by its first words, without keys, values
// or tokens: the name, and for SET its options ("SET PX NX").
func commandWords(args []string) string {
	name := strings.ToUpper(args[0])
	if name != "SET" || len(args) < 4 {
		return name
	}
	words := []string{name}
	for _, a := range args[3:] {
		switch w := strings.ToUpper(a); w {
		case "NX", "XX", "GET", "KEEPTTL", "EX", "PX", "EXAT", "PXAT", "IFEQ", "IFNE", "IFDEQ", "IFDNE":
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}
