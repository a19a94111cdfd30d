package harness

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/redis/go-redis/v9"
)

// clientHook makes every command of a client honour its crash and pause,
// and passes it through the failpoints armed on the lock's commands.
type clientHook struct {
	c    *Client
	node int // the lock node the hooked go-redis client talks to; -1 for none
}

func (h clientHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if h.c.crashed.Load() {
			return nil, ErrNotSent
		}
		return next(ctx, network, addr)
	}
}

func (h clientHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		return h.c.Commands(ctx, h.node, sent([]redis.Cmder{cmd}), func() error {
			// go-redis sets a command's error only once the hooks returned;
			// strike reads it before.
			err := next(ctx, cmd)
			cmd.SetErr(err)
			return err
		})
	}
}

func (h clientHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		return h.c.Commands(ctx, h.node, sent(cmds), func() error { return next(ctx, cmds) })
	}
}

// sent are go-redis commands in the harness's terms (Sent): their words,
// and a reply read once they ran.
func sent(cmds []redis.Cmder) []Sent {
	s := make([]Sent, len(cmds))
	for i, cmd := range cmds {
		s[i] = Sent{Args: redisArgs(cmd), Reply: func() (any, error) { return redisReply(cmd) }}
	}
	return s
}

// redisArgs are the words of a go-redis command, as sent.
func redisArgs(cmd redis.Cmder) []string {
	args := make([]string, len(cmd.Args()))
	for i, a := range cmd.Args() {
		args[i] = fmt.Sprint(a)
	}
	return args
}

// redisReply is a go-redis command's reply and error in the terms of
// rediscmd.TookBy: a string (a status, or a script's string), an int64, a
// bool, or nil for a null (go-redis's redis.Nil) or a reply of another
// shape (an array).
func redisReply(cmd redis.Cmder) (any, error) {
	if err := cmd.Err(); err != nil {
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		return nil, err
	}
	switch cmd := cmd.(type) {
	case *redis.BoolCmd:
		return cmd.Val(), nil
	case *redis.StatusCmd:
		return cmd.Val(), nil
	case *redis.StringCmd:
		return cmd.Val(), nil
	case *redis.IntCmd:
		return cmd.Val(), nil
	case *redis.Cmd:
		switch v := cmd.Val().(type) {
		case int64, string, bool:
			return v, nil
		}
	}
	return nil, nil
}
