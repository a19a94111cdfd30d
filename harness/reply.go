package harness

import (
	"context"
	"errors"
	"time"

	"github.com/locklab/locklab/harness/rediscmd"
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
	// rows is where a statement's send leaves how many rows it changed
	// (negative: not told); nil for any other request.
	rows *int64
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
// history records, and false when it records none: node is not a lock
// node (the inventory), or the client's handle does not say (ReplyNoder:
// Redis's says none with one lock node, whose client lanes say it all).
func (c *Client) replyNode(node int) (int, bool) {
	if r, ok := c.handle.(ReplyNoder); ok && node >= 0 {
		return r.ReplyNode(node)
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
		if _, ok := c.lockKeyIn(s.args); !ok {
			continue
		}
		op := history.Op{Client: c.id, Kind: history.KindReply, Key: c.key, Call: x.call, Return: x.ret,
			Node: n, Command: rediscmd.Words(s.args), Phase: string(pr.phase)}
		reply, err := s.reply()
		var redisErr interface{ RedisError() }
		switch {
		case err == nil:
			op.Outcome = rediscmd.Outcome(reply)
		case errors.As(err, &redisErr):
			op.Error = err.Error()
		default:
			// A timeout, a broken connection: no reply came.
			op.Return, op.Error = history.NeverReturned, err.Error()
		}
		c.history.Add(op)
	}
}

// recordRequest records one request op for a request of the lock, name,
// sent through x in phase run pr with the outcome err (a statement, an
// etcd or memcached request, whose replies no node records): when it was
// sent, whether the server said yes. A request never sent has none; one
// whose reply never came (a timeout, a broken connection) never returned.
func (c *Client) recordRequest(pr *phaseRun, name string, x *exchange, err error) {
	if !x.sent {
		return
	}
	op := history.Op{Client: c.id, Kind: history.KindRequest, Key: c.key, Call: x.call, Return: x.ret,
		Command: name, Phase: string(pr.phase), Outcome: models.OK}
	var timeout interface{ Timeout() bool }
	switch {
	case err == nil:
		if x.rows != nil && *x.rows >= 0 {
			n := *x.rows
			op.Rows = &n
		}
	case errors.As(err, &timeout) && timeout.Timeout(), errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrCrashed):
		op.Return, op.Outcome, op.Error = history.NeverReturned, "", err.Error()
	default:
		op.Outcome, op.Error = models.Failed, err.Error()
	}
	c.history.Add(op)
}
