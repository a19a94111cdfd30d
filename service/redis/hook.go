package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/harness"
)

// options are the go-redis settings of every connection of a client:
// retries off, so that a timeout surfaces as an unknown outcome instead of
// being silently retried.
func options(addr string, timeout time.Duration) *goredis.Options {
	return &goredis.Options{
		Addr:            addr,
		Protocol:        2,
		DisableIdentity: true,
		MaxRetries:      -1,
		// Commands end at the caller's deadline, not only at the timeouts
		// below: a lock's per-node timeout must mean what it says.
		ContextTimeoutEnabled: true,
		DialerRetries:         1,
		DialTimeout:           timeout,
		ReadTimeout:           timeout,
		WriteTimeout:          timeout,
		PoolSize:              4,
		DialerRetryTimeout:    time.Millisecond,
	}
}

// hook makes every command of a client's go-redis connection honour its
// crash and pause, and passes it through the failpoints armed on the
// lock's commands (harness.Client.Commands).
type hook struct {
	c    *harness.Client
	node int // the lock node the hooked go-redis client talks to; -1 for none
}

// DialHook refuses a new connection once the client crashed.
func (h hook) DialHook(next goredis.DialHook) goredis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if h.c.Crashed() {
			return nil, harness.ErrNotSent
		}
		return next(ctx, network, addr)
	}
}

// ProcessHook runs one command through the client's Commands.
func (h hook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		return h.c.Commands(ctx, h.node, sent([]goredis.Cmder{cmd}), func() error {
			// go-redis sets a command's error only once the hooks returned;
			// strike reads it before.
			err := next(ctx, cmd)
			cmd.SetErr(err)
			return err
		})
	}
}

// ProcessPipelineHook runs one pipeline through the client's Commands.
func (h hook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		return h.c.Commands(ctx, h.node, sent(cmds), func() error { return next(ctx, cmds) })
	}
}

// sent are go-redis commands in the harness's terms (harness.Sent): their
// words, and a reply read once they ran.
func sent(cmds []goredis.Cmder) []harness.Sent {
	s := make([]harness.Sent, len(cmds))
	for i, cmd := range cmds {
		s[i] = harness.Sent{Args: args(cmd), Reply: func() (any, error) { return reply(cmd) }}
	}
	return s
}

// args are the words of a go-redis command, as sent.
func args(cmd goredis.Cmder) []string {
	args := make([]string, len(cmd.Args()))
	for i, a := range cmd.Args() {
		args[i] = fmt.Sprint(a)
	}
	return args
}

// reply is a go-redis command's reply and error in the terms of
// rediscmd.TookBy: a string (a status, or a script's string), an int64, a
// bool, or nil for a null (go-redis's Nil) or a reply of another shape (an
// array).
func reply(cmd goredis.Cmder) (any, error) {
	if err := cmd.Err(); err != nil {
		if errors.Is(err, goredis.Nil) {
			return nil, nil
		}
		return nil, err
	}
	switch cmd := cmd.(type) {
	case *goredis.BoolCmd:
		return cmd.Val(), nil
	case *goredis.StatusCmd:
		return cmd.Val(), nil
	case *goredis.StringCmd:
		return cmd.Val(), nil
	case *goredis.IntCmd:
		return cmd.Val(), nil
	case *goredis.Cmd:
		switch v := cmd.Val().(type) {
		case int64, string, bool:
			return v, nil
		}
	}
	return nil, nil
}
