package cause_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/checker/cause"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func acquire(client, at int) history.Op {
	return history.Op{Client: client, Kind: history.KindAcquire, Key: "lock", Call: ms(at - 5), Return: ms(at), Outcome: models.OK}
}

func refused(client, at int) history.Op {
	return history.Op{Client: client, Kind: history.KindAcquire, Key: "lock", Call: ms(at - 1), Return: ms(at), Outcome: models.Failed}
}

func release(client, call, ret int) history.Op {
	return history.Op{Client: client, Kind: history.KindRelease, Key: "lock", Call: ms(call), Return: ms(ret), Outcome: models.OK}
}

// statement is a SQL statement's request that changed rows rows (-1: the
// server did not say).
func statement(client, at int, command, phase string, rows int64) history.Op {
	op := history.Op{Client: client, Kind: history.KindRequest, Key: "lock", Call: ms(at), Return: ms(at + 1), Outcome: models.OK, Command: command, Phase: phase}
	if rows >= 0 {
		op.Rows = &rows
	}
	return op
}

// server is a server event seen between from and to ms.
func server(from, to int, key string, ev history.ServerEvent) history.Op {
	return history.Op{Client: -1, Kind: history.KindServer, Key: key, Call: ms(from), Return: ms(to), Server: &ev}
}

// TestOf: each cause from the events that tell it, server events and the
// rows a statement changed among them, and none told from events that do
// not (a DELETE that changed nothing, a handover's delete seen late).
func TestOf(t *testing.T) {
	end := history.Op{Client: -1, Kind: history.KindEnd, Call: ms(2000), Return: ms(2000), End: &history.End{TTL: ms(200)}}
	// Client 1 holds from 100 ms; client 2 takes the lock at 250 ms while
	// it holds (330 ms: past client 1's lease), client 3 refused meanwhile.
	run := func(second int, extra ...history.Op) []history.Op {
		ops := []history.Op{acquire(1, 100), refused(3, 120), acquire(2, second), release(1, 400, 401), release(2, 450, 451), end}
		return append(ops, extra...)
	}
	zk := func(owner int, czxid int64) history.ServerEvent {
		return history.ServerEvent{Event: "create", Owner: owner, Session: "0x1" + string(rune('0'+owner)), Created: czxid}
	}
	zkGone := func(owner int, czxid int64) history.ServerEvent {
		ev := zk(owner, czxid)
		ev.Event = "delete"
		return ev
	}
	etcd := func(event string, created, rev int64, gone bool) history.ServerEvent {
		return history.ServerEvent{Event: event, Owner: -1, Session: "0x7", Created: created, Revision: rev, Gone: gone}
	}
	const node1, node2 = "/locklab/lock/_c_1-lock-0000000001", "/locklab/lock/_c_2-lock-0000000002"
	const key0, key1, key2 = "/locklab/lock/0a", "/locklab/lock/1b", "/locklab/lock/2c"
	for _, tc := range []struct {
		name   string
		ops    []history.Op
		kind   cause.Kind
		client int
		want   string // words the cause says; "" for none
	}{
		{"a ZooKeeper session's node deleted", run(250, server(0, 99, node1, zk(1, 10)), server(99, 110, node2, zk(2, 11)), server(110, 245, node1, zkGone(1, 10))),
			cause.Expiry, -1, "deletes client 1's node " + node1 + ", ephemeral to session 0x11"},
		{"another client's node deleted is no cause", run(250, server(0, 99, node1, zk(1, 10)), server(99, 110, node2, zk(2, 11)), server(110, 245, node2, zkGone(2, 11))),
			cause.Grant, 0, ""},
		{"an etcd key deleted with its lease", run(250, server(0, 99, key1, etcd("put", 5, 5, false)), server(99, 110, key2, etcd("put", 6, 6, false)),
			server(110, 245, key1, etcd("delete", 5, 7, true))),
			cause.Expiry, -1, "deletes client 1's key " + key1 + " (deleted at revision 7): its lease 0x7 ran out on the server"},
		{"an etcd key deleted, its lease alive, by the one DeleteRange then", run(250, server(0, 99, key1, etcd("put", 5, 5, false)),
			server(99, 110, key2, etcd("put", 6, 6, false)), statement(3, 200, "DELETERANGE", "acquire", -1), server(110, 245, key1, etcd("delete", 5, 7, false))),
			cause.Release, 3, "client 3's DELETERANGE (in its acquire, sent at 200 ms) deletes client 1's key"},
		{"a handover's delete seen late is no cause", run(250, acquire(0, 10), release(0, 95, 99), server(0, 5, key0, etcd("put", 4, 4, false)),
			server(5, 20, key1, etcd("put", 5, 5, false)), server(20, 101, key0, etcd("delete", 4, 6, false))),
			cause.Grant, 0, ""},
		{"a late DELETE that freed a row", run(250, acquire(0, 10), release(0, 50, 300), statement(0, 200, "DELETE", "release", 1)),
			cause.Release, 0, "client 0's late release: its DELETE"},
		{"a late DELETE that found no row", run(250, acquire(0, 10), release(0, 50, 300), statement(0, 200, "DELETE", "release", 0)),
			cause.Expiry, -1, "nothing recorded removed client 1's key"},
		{"a takeover UPDATE within the lease", run(250, statement(2, 240, "UPDATE", "acquire", 1)),
			cause.Release, 2, "client 2's UPDATE (in its acquire, sent at 240 ms) changes 1 row: it takes over client 1's lock"},
		{"a cleanup UPDATE after the lease", run(330, statement(2, 320, "UPDATE", "acquire", 1)),
			cause.Release, 2, "client 2's cleanup UPDATE, sent at 320 ms in its acquire, takes over the expired lock"},
		{"a cleanup that changed nothing", run(330, statement(2, 320, "UPDATE", "acquire", 0)),
			cause.Expiry, -1, "client 1's lease runs out on the server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, ok := checker.FirstOverlap(tc.ops)
			if !ok {
				t.Fatal("no overlap")
			}
			c, ok := cause.Of(tc.ops, a, b)
			if tc.want == "" {
				if ok && strings.Contains(c.Text, "the server deletes") {
					t.Errorf("cause %q, want none from the server's events", c.Text)
				}
				return
			}
			if !ok || c.Kind != tc.kind || c.Client != tc.client || !strings.Contains(c.Text, tc.want) {
				t.Errorf("cause %v %q (%s, client %d), want %q (%s, client %d)", ok, c.Text, c.Kind, c.Client, tc.want, tc.kind, tc.client)
			}
			if ok && (c.At < a.Start || c.At > b.Start) {
				t.Errorf("cause at %s, outside %s–%s", c.At, a.Start, b.Start)
			}
		})
	}
}
