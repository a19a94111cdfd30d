package timeline

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// TestCause: the story names what let the second holder in from the
// recorded events, each kind of cause from its own evidence, and none when
// nothing recorded explains the overlap.
func TestCause(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	acquire := func(client, at int) history.Op {
		return history.Op{Client: client, Kind: history.KindAcquire, Key: "lock", Call: ms(at - 1), Return: ms(at), Outcome: models.OK}
	}
	refused := func(client, at int) history.Op {
		return history.Op{Client: client, Kind: history.KindAcquire, Key: "lock", Call: ms(at - 1), Return: ms(at), Outcome: models.Failed}
	}
	release := func(client, call, ret int) history.Op {
		return history.Op{Client: client, Kind: history.KindRelease, Key: "lock", Call: ms(call), Return: ms(ret), Outcome: models.OK}
	}
	reply := func(client, at int, command, phase string) history.Op {
		return history.Op{Client: client, Kind: history.KindReply, Key: "lock", Call: ms(at), Return: ms(at + 1), Outcome: models.OK, Command: command, Phase: phase}
	}
	request := func(client, at int, command, phase string) history.Op {
		return history.Op{Client: client, Kind: history.KindRequest, Key: "lock", Call: ms(at), Return: ms(at + 1), Outcome: models.OK, Command: command, Phase: phase}
	}
	end := history.Op{Client: -1, Kind: history.KindEnd, Call: ms(2000), Return: ms(2000), End: &history.End{TTL: ms(200)}}
	// Client 1 holds from 100 ms; client 2 takes the lock at 250 ms while
	// it holds (or at 330 ms, past client 1's lease), and client 3 was
	// refused meanwhile. Each case adds client 0's part, or a fault.
	run := func(second int, extra ...history.Op) []history.Op {
		ops := []history.Op{acquire(1, 100), refused(3, 120), acquire(2, second), release(1, 400, 401), release(2, 450, 451), end}
		return append(ops, extra...)
	}
	paused := history.Op{Client: 0, Kind: history.KindFault, FaultKind: "pause", Call: ms(60), Return: ms(230)}
	// The servers' events: client 1's node or key made, client 2's queued
	// behind it, and client 1's deleted while it held the lock.
	server := func(from, to int, key, event string, owner int, created, rev int64, gone bool) history.Op {
		return history.Op{Client: -1, Kind: history.KindServer, Key: key, Call: ms(from), Return: ms(to),
			Server: &history.ServerEvent{Event: event, Owner: owner, Session: "0x5", Created: created, Revision: rev, Gone: gone}}
	}
	zk := run(250, server(0, 99, "/l/n1", "create", 1, 7, 0, false), server(99, 110, "/l/n2", "create", 2, 8, 0, false), server(110, 240, "/l/n1", "delete", 1, 7, 0, false))
	etcd := run(250, server(0, 99, "/l/k1", "put", -1, 7, 7, false), server(99, 110, "/l/k2", "put", -1, 8, 8, false), server(110, 240, "/l/k1", "delete", -1, 7, 9, true))
	for _, tc := range []struct {
		name   string
		ops    []history.Op
		client int    // who the cause step names as its actor
		want   string // words the cause says; "" for no cause
	}{
		{"a late DEL's reply", run(250, acquire(0, 10), release(0, 50, 300), paused, reply(0, 200, "DEL", "release")), 0, "client 0's late release: its DEL, sent at 200 ms"},
		{"a takeover", run(250, reply(2, 249, "GETSET", "acquire")), 2, "client 2's GETSET (in its acquire) takes client 1's key over"},
		{"a late DELETE request", run(250, acquire(0, 10), release(0, 50, 300), request(0, 200, "DELETE", "release")), 0, "client 0's late release: its DELETE"},
		{"a fault that loses the lock", run(250, history.Op{Client: -1, Kind: history.KindFault, Call: ms(150), Return: ms(160),
			Fault: "node 0 restarted empty", Effect: history.EffectLoss}), -1, "node 0 restarted empty: client 1's lock is lost with it"},
		{"a paused release, no reply recorded", run(250, acquire(0, 10), release(0, 50, 240), paused), 0, "client 0's late release (sent at 50 ms)"},
		{"a handover is no cause", run(250, acquire(0, 10), release(0, 99, 101)), 0, ""},
		{"nothing recorded", run(250), 0, ""},
		{"an acquire's cleanup after the lease", run(330, request(2, 320, "DELETE", "acquire")),
			2, "client 1's lease runs out on the server, 200 ms after its acquire returned; client 2's cleanup DELETE, sent at 320 ms"},
		{"the lease, by itself", run(330), -1, "client 1's lease runs out on the server"},
		{"a key the server expired early", run(250, request(1, 99, "ADD", "acquire"), request(2, 249, "ADD", "acquire")), -1, "the server expired it by its own clock"},
		{"a ZooKeeper node gone with its session", zk, -1, "the server deletes client 1's node /l/n1, ephemeral to session 0x5"},
		{"an etcd key gone with its lease", etcd, -1, "its lease 0x5 ran out on the server"},
		{"a lock that never refuses", []history.Op{acquire(0, 10), acquire(1, 20), release(0, 30, 31), release(1, 40, 41), end}, 1, "the lock never refuses a client for another's hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			story := Story(tc.ops, []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Illegal}})
			cause, ok := CauseOf(story)
			switch {
			case tc.want == "" && ok:
				t.Errorf("cause %q, want none", cause.Text)
			case tc.want == "":
			case !ok:
				t.Errorf("no cause, want %q", tc.want)
			case !strings.Contains(cause.Text, tc.want) || cause.Client != tc.client:
				t.Errorf("cause of client %d: %q, want client %d: %q", cause.Client, cause.Text, tc.client, tc.want)
			}
		})
	}
}

// TestSequenceServerCause: a run whose second holder the servers' events
// explain draws their word as the cause step, between the two holds, on a
// lifeline named for the service.
func TestSequenceServerCause(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	ops := []history.Op{
		{Client: 1, Kind: history.KindAcquire, Key: "lock", Call: ms(90), Return: ms(100), Outcome: models.OK},
		{Client: -1, Kind: history.KindServer, Key: "/l/n1", Call: ms(0), Return: ms(95), Server: &history.ServerEvent{Event: "create", Owner: 1, Session: "0x5", Created: 7}},
		{Client: -1, Kind: history.KindServer, Key: "/l/n2", Call: ms(95), Return: ms(110), Server: &history.ServerEvent{Event: "create", Owner: 2, Session: "0x6", Created: 8}},
		{Client: -1, Kind: history.KindServer, Key: "/l/n1", Call: ms(110), Return: ms(240), Server: &history.ServerEvent{Event: "delete", Owner: 1, Session: "0x5", Created: 7}},
		{Client: 2, Kind: history.KindAcquire, Key: "lock", Call: ms(105), Return: ms(250), Outcome: models.OK},
		{Client: 1, Kind: history.KindRelease, Key: "lock", Call: ms(400), Return: ms(401), Outcome: models.OK},
		{Client: 2, Kind: history.KindRelease, Key: "lock", Call: ms(450), Return: ms(451), Outcome: models.OK},
		{Client: -1, Kind: history.KindEnd, Call: ms(500), Return: ms(500), End: &history.End{TTL: ms(1000)}},
	}
	checks := []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Illegal}}
	story := Story(ops, checks)
	cause, ok := CauseOf(story)
	if !ok || cause.Step != StepExpire || cause.At < ms(100) || cause.At > ms(250) || !strings.Contains(cause.Text, "the session expired on the server") {
		t.Fatalf("cause %v: %+v, want the session's end between 100 and 250 ms", ok, cause)
	}
	seq, ok := Sequence(ops, checks)
	if !ok {
		t.Fatal("no sequence drawn")
	}
	if n := len(parse(t, seq).find("step cause")); n != 1 {
		t.Errorf("the sequence diagram draws %d cause steps, want 1", n)
	}
	if !strings.Contains(string(seq), "lock (ZK)") {
		t.Error("the lock's lifeline is not named for ZooKeeper")
	}
}
