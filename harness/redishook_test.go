package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/history"
)

// clientHook makes every command of a client honour its crash and pause,
// and passes it through the failpoints armed on the lock's commands.
type clientHook struct {
	c    *Client
	node int // the lock node the hooked go-redis client talks to; -1 for none
}

func (h clientHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if h.c.Crashed() {
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

// testRedis dials a test client's go-redis connections to the nodes at
// addrs, hooked (clientHook), as service/redis's Dialer does, which this
// package's tests cannot import: one connection per node with more than
// one, as on redlock.
type testRedis struct{ addrs []string }

// testHandle is testRedis's Handle.
type testHandle struct {
	redis   *redis.Client
	nodes   []*redis.Client
	dialled *atomic.Int32 // as the failover client's, when a test sets it
}

func (d testRedis) Dial(c *Client, addrs []string) (Handle, error) {
	h := &testHandle{redis: c.dial(addrs[0], c.timeout, 0)}
	if len(addrs) > 1 {
		for i, addr := range addrs {
			h.nodes = append(h.nodes, c.dial(addr, c.timeout, i))
		}
	}
	return h, nil
}

func (testRedis) Env(c *Client, addrs []string) []string { return nil }

func (d testRedis) Probe(c *Client) KeyReader {
	var p testProbes
	for _, addr := range d.addrs {
		o := testOptions(addr, probeTimeout)
		o.PoolSize = 1
		p = append(p, redis.NewClient(o))
	}
	return p
}

func (h *testHandle) Close() error {
	h.redis.Close()
	for _, n := range h.nodes {
		n.Close()
	}
	return nil
}

func (h *testHandle) ReplyNode(node int) (int, bool) {
	switch {
	case h.dialled != nil:
		n := int(h.dialled.Load())
		return n, n >= 0
	case len(h.nodes) > 1:
		return node, true
	}
	return 0, false
}

// testProbes are a test client's probes, one per node.
type testProbes []*redis.Client

func (p testProbes) ReadKey(ctx context.Context, node int, key string) (string, bool, error) {
	if node >= len(p) {
		return "", false, errors.New("no probe")
	}
	dump, err := p[node].Dump(ctx, key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return dump, true, nil
}

func (p testProbes) Close() error {
	for _, rc := range p {
		rc.Close()
	}
	return nil
}

// newRedisClient is a test client dialling the nodes at addrs directly.
func newRedisClient(id int, addrs []string, h *history.Recorder, points []failpoint.Point) *Client {
	return newClient(context.Background(), clientConfig{id: id, ttl: 100 * time.Millisecond, service: testRedis{addrs}, serviceAddrs: addrs,
		timeout: time.Second, history: h, points: failpoint.NewSet(points)})
}

// Redis is a test client's connection to its first node.
func (c *Client) Redis() *redis.Client { return c.handle.(*testHandle).redis }

// Nodes is a test client's connection to each node.
func (c *Client) Nodes() []*redis.Client {
	if h := c.handle.(*testHandle); len(h.nodes) > 0 {
		return h.nodes
	}
	return []*redis.Client{c.Redis()}
}

// testProbe is a test client's probe to its first node.
func (c *Client) testProbe() *redis.Client { return c.probe.(testProbes)[0] }

// testOptions are service/redis's settings of a client's connection.
func testOptions(addr string, timeout time.Duration) *redis.Options {
	return &redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1, ContextTimeoutEnabled: true,
		DialerRetries: 1, DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, PoolSize: 4, DialerRetryTimeout: time.Millisecond}
}

// dial builds a go-redis client to addr, lock node node (-1 for none), with
// this client's crash and pause hook.
func (c *Client) dial(addr string, timeout time.Duration, node int) *redis.Client {
	rc := redis.NewClient(testOptions(addr, timeout))
	rc.AddHook(clientHook{c: c, node: node})
	return rc
}
