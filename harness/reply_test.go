package harness

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// newTestNodes starts n nodes and a client with one connection to each, as
// on redlock.
func newTestNodes(t *testing.T, n int, points []failpoint.Point) (*Client, []cluster.Node) {
	t.Helper()
	var nodes []cluster.Node
	var addrs []string
	for range n {
		nd, err := local.StartProcess(context.Background(), cluster.NodeConfig{Name: "n", Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nd.Stop() })
		nodes, addrs = append(nodes, nd), append(addrs, nd.Addr())
	}
	h, err := history.New("")
	if err != nil {
		t.Fatal(err)
	}
	c := newRedisClient(3, addrs, h, points)
	t.Cleanup(c.Close)
	return c, nodes
}

func replies(ops []history.Op) []history.Op {
	var out []history.Op
	for _, op := range ops {
		if op.Kind == history.KindReply {
			out = append(out, op)
		}
	}
	return out
}

// TestRepliesRecorded: with more than one lock node, each command about the
// lock key leaves one reply op naming its node, command, phase and answer;
// the inventory's commands and other keys leave none.
func TestRepliesRecorded(t *testing.T) {
	ctx := context.Background()
	c, nodes := newTestNodes(t, 2, nil)
	admin := redis.NewClient(&redis.Options{Addr: nodes[1].Addr()})
	defer admin.Close()
	if err := admin.Set(ctx, "lock", "other", 0).Err(); err != nil {
		t.Fatal(err)
	}
	actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
	c.Nodes()[0].SetNX(actx, "lock", "mine", 1500*time.Millisecond)
	c.Nodes()[1].SetNX(actx, "lock", "mine", 1500*time.Millisecond)
	c.Nodes()[0].Get(actx, "other key")
	inv := c.dial(nodes[0].Addr(), time.Second, -1) // not a lock node, as the inventory's
	defer inv.Close()
	inv.Get(actx, "lock")
	leave()
	rctx, leave := c.Enter(ctx, failpoint.PhaseRelease)
	c.Nodes()[0].Eval(rctx, "return redis.call('del', KEYS[1])", []string{"lock"})
	c.Nodes()[1].Incr(rctx, "lock") // an error reply: the value is no number
	leave()

	got := replies(c.history.Ops())
	want := []history.Op{
		{Node: 0, Command: "SET PX NX", Phase: "acquire", Outcome: models.OK},
		{Node: 1, Command: "SET PX NX", Phase: "acquire", Outcome: models.Failed},
		{Node: 0, Command: "EVAL", Phase: "release", Outcome: models.OK},
		{Node: 1, Command: "INCR", Phase: "release", Error: "ERR value is not an integer or out of range"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d replies, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Client != 3 || g.Key != "lock" || g.Node != w.Node || g.Command != w.Command || g.Phase != w.Phase ||
			g.Outcome != w.Outcome || g.Error != w.Error || g.Return < g.Call || g.Call <= 0 {
			t.Errorf("reply %d: %+v, want %+v", i, g, w)
		}
	}
}

// TestRepliesOnlyOfSentCommands: a command that never left (the client
// crashed before it) has no reply; one whose reply never came has one that
// never returned; a run with one lock node records none.
func TestRepliesOnlyOfSentCommands(t *testing.T) {
	ctx := context.Background()
	t.Run("crash before", func(t *testing.T) {
		c, _ := newTestNodes(t, 2, []failpoint.Point{{Name: failpoint.BeforeCommand(failpoint.PhaseAcquire, 1), Client: 3, Action: failpoint.Crash()}})
		actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
		c.Nodes()[0].SetNX(actx, "lock", "mine", 1500*time.Millisecond)
		leave()
		if r := replies(c.history.Ops()); len(r) != 0 {
			t.Errorf("replies of an unsent command: %+v", r)
		}
	})
	t.Run("relayed", func(t *testing.T) {
		c, _ := newTestNodes(t, 2, nil)
		r := NewRelay(c)
		_, leave := c.Enter(ctx, failpoint.PhaseAcquire)
		r.Command(1, []string{"SET", "lock", "t", "NX", "PX", "100"}, func() (any, error) { return nil, errors.New("EOF") })
		r.Command(1, []string{"EVALSHA", "abc", "1", "lock"}, func() (any, error) { return nil, testRedisError("NOSCRIPT no script") })
		leave()
		got := replies(c.history.Ops())
		if len(got) != 2 || got[0].Node != 1 || got[0].Return != history.NeverReturned || got[0].Error != "EOF" ||
			got[1].Return == history.NeverReturned || got[1].Error != "NOSCRIPT no script" || got[1].Command != "EVALSHA" {
			t.Errorf("relayed replies %+v", got)
		}
	})
	t.Run("one lock node", func(t *testing.T) {
		c, _ := newTestClient(t, nil)
		actx, leave := c.Enter(ctx, failpoint.PhaseAcquire)
		c.Redis().SetNX(actx, "lock", "mine", 1500*time.Millisecond)
		leave()
		if r := replies(c.history.Ops()); len(r) != 0 {
			t.Errorf("replies on a single node: %+v", r)
		}
	})
}

type testRedisError string

func (e testRedisError) Error() string { return string(e) }
func (testRedisError) RedisError()     {}

func TestReplyNode(t *testing.T) {
	h := &testHandle{}
	c := &Client{handle: h}
	if _, ok := c.replyNode(0); ok {
		t.Error("a single node records replies")
	}
	h.dialled = new(atomic.Int32)
	h.dialled.Store(-1)
	if _, ok := c.replyNode(0); ok {
		t.Error("replicated, before any dial, records replies")
	}
	h.dialled.Store(2)
	if n, ok := c.replyNode(0); !ok || n != 2 {
		t.Errorf("replicated: node %d %v, want 2 (the dialled data node)", n, ok)
	}
	if _, ok := c.replyNode(-1); ok {
		t.Error("the inventory records replies")
	}
}
