package redis

import (
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// TestReplyNode: the history records replies by node on redlock (the node
// a command was sent to) and replicated (the data node the failover client
// last dialled), on a single master that master, and none before any
// dial.
func TestReplyNode(t *testing.T) {
	single := &handle{redis: goredis.NewClient(&goredis.Options{})}
	if n, ok := single.ReplyNode(0); !ok || n != 0 {
		t.Errorf("single: node %d %v, want 0 (the master)", n, ok)
	}
	redlock := &handle{nodes: []*goredis.Client{goredis.NewClient(&goredis.Options{}), goredis.NewClient(&goredis.Options{})}}
	if n, ok := redlock.ReplyNode(1); !ok || n != 1 {
		t.Errorf("redlock: node %d %v, want 1", n, ok)
	}
	replicated := &handle{dialled: new(atomic.Int32)}
	replicated.dialled.Store(-1)
	if _, ok := replicated.ReplyNode(0); ok {
		t.Error("replicated, before any dial, records replies")
	}
	replicated.dialled.Store(2)
	if n, ok := replicated.ReplyNode(0); !ok || n != 2 {
		t.Errorf("replicated: node %d %v, want 2 (the dialled data node)", n, ok)
	}
	for _, h := range []*handle{single, redlock} {
		h.Close()
	}
}

// TestEndpoints: a program on single dials the master through its link,
// on redlock every master, which package program's relay reads.
func TestEndpoints(t *testing.T) {
	d := &masters{}
	if e := d.Endpoints(nil, []string{"a:1"}); e.Redis != "a:1" || len(e.Nodes) != 0 || e.Unrelayed() != "" {
		t.Errorf("single: %+v", e)
	}
	if e := d.Endpoints(nil, []string{"a:1", "b:2"}); e.Redis != "" || len(e.Nodes) != 2 || e.Unrelayed() != "" {
		t.Errorf("redlock: %+v", e)
	}
}
